// What `jitcache --version` and `jitcache doctor` say about this build: version, commit, build
// type and the features compiled in.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace jitcache::tool {

nlohmann::json version_info();  // {"version", "commit", "build_type", "features": [...]}
std::string version_text();     // the same, for people: "jitcache 0.1.0 (commit ..., RelWithDebInfo)\nfeatures: ..."

}  // namespace jitcache::tool

// Runs a function in a forked child and brings its JSON answer back: doctor asks each driver
// stack there, so that a driver that crashes or hangs cannot take the tool down, and the
// libraries one API's loader pulls in never show up in another API's identity.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace jitcache::tool {

struct IsolatedAnswer {
  nlohmann::json value;  // what `work` returned; null on failure
  std::string failure;   // non-empty: the child crashed, hung past the limit, or answered garbage
};

// `limit` bounds the whole call: a child still running then is killed.
IsolatedAnswer call_isolated(const std::function<nlohmann::json()>& work, std::chrono::seconds limit);

}  // namespace jitcache::tool

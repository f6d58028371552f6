#include "tools/lib/version.hpp"

#include "jitcache_commit.h"  // generated at build time (cmake/write_commit.cmake)
#include "store/tiers/tiers.hpp"

namespace jitcache::tool {

nlohmann::json version_info() {
  nlohmann::json features = nlohmann::json::array();
  features.push_back("opencl");  // LD_PRELOAD hooks and the OpenCL ICD layer
#if defined(_WIN32)
  features.push_back("windows-injection");  // no remote, packs or helper there (MinGW: no libcrypto)
#else
  features.push_back("level-zero");
  for (const RemoteScheme* scheme : linked_tiers().remote_schemes()) features.push_back("remote-" + std::string(scheme->name));
  features.push_back("remote-hmac");
  features.push_back("packs");
  features.push_back("capture-helper");
#endif
  return {{"version", JITCACHE_VERSION}, {"commit", JITCACHE_COMMIT}, {"build_type", JITCACHE_BUILD_TYPE},
          {"features", features}};
}

std::string version_text() {
  nlohmann::json info = version_info();
  std::string text = "jitcache " + info["version"].get<std::string>() + " (commit " +
                     info["commit"].get<std::string>() + ", " + info["build_type"].get<std::string>() + ")\nfeatures:";
  for (const auto& feature : info["features"]) text += " " + feature.get<std::string>();
  return text;
}

}  // namespace jitcache::tool

#include "tools/lib/entry_view.hpp"

namespace jitcache::tool {

std::string entry_kind(const nlohmann::json& sidecar) {
  if (!sidecar.is_object()) return "?";
  return sidecar.value("api", std::string("?")) + " " + sidecar.value("kind", std::string("?"));
}

std::string entry_kernels(const nlohmann::json& sidecar, std::size_t max_chars) {
  std::string joined;
  if (sidecar.is_object() && sidecar.contains("kernel_names") && sidecar["kernel_names"].is_array()) {
    for (const auto& name : sidecar["kernel_names"]) {
      if (name.is_string()) joined += (joined.empty() ? "" : ", ") + name.get<std::string>();
    }
  }
  if (joined.empty()) return "?";
  return joined.size() > max_chars ? joined.substr(0, max_chars - 2) + ".." : joined;
}

std::string entry_label(const nlohmann::json& sidecar) {
  auto it = sidecar.is_object() ? sidecar.find("label") : sidecar.end();
  return it != sidecar.end() && it->is_string() ? it->get<std::string>() : std::string();
}

nlohmann::json entry_summary_json(const EntryInfo& entry, std::int64_t hits) {
  const nlohmann::json& sidecar = entry.sidecar;
  const bool ok = sidecar.is_object();
  return {{"key", entry.key.hex()},
          {"bytes", entry.bytes},
          {"binary_size", ok ? sidecar.value("binary_size", std::uint64_t{0}) : 0},
          {"last_access_ns", entry.last_access_ns},
          {"created", ok ? sidecar.value("created", std::string()) : ""},
          {"api", ok ? sidecar.value("api", std::string()) : ""},
          {"kind", ok ? sidecar.value("kind", std::string()) : ""},
          {"device", ok ? sidecar.value("device", std::string()) : ""},
          {"label", entry_label(sidecar)},
          {"kernel_names", ok && sidecar.contains("kernel_names") ? sidecar["kernel_names"] : nlohmann::json::array()},
          {"compile_time_us", ok ? sidecar.value("compile_time_us", std::uint64_t{0}) : 0},
          {"hits", hits}};
}

}  // namespace jitcache::tool

#include "tools/lib/pack_transform.hpp"

#include <algorithm>
#include <ctime>

#include "core/settings.hpp"

namespace jitcache::tool {
namespace {

std::string text_of(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

void drop_texts(nlohmann::json* value) {
  if (value->is_object()) {
    value->erase("text");
    for (auto& [name, child] : value->items()) drop_texts(&child);
  } else if (value->is_array()) {
    for (auto& child : *value) drop_texts(&child);
  }
}


// Recorded query answers (docs/store-format.md, "answers"): a build log may quote source lines,
// so a stripped entry answers an empty one; the answers themselves stay, or the shim would not
// serve the entry.
void strip_answers(nlohmann::json* sidecar) {
  auto answers = sidecar->find("answers");
  if (answers == sidecar->end() || !answers->is_object()) return;
  if (auto log = answers->find("build_log"); log != answers->end() && log->is_string()) *log = "";
}

// Kernel answers filed under hashed names ("hashed_kernels"): the shim hashes the name it is asked
// about. A jitcache that predates the field finds no "kernels" and rebuilds rather than answer wrong.
void obfuscate_answers(nlohmann::json* sidecar) {
  auto answers = sidecar->find("answers");
  if (answers == sidecar->end() || !answers->is_object()) return;
  auto kernels = answers->find("kernels");
  if (kernels == answers->end() || !kernels->is_object()) return;
  nlohmann::json hashed = nlohmann::json::object();
  for (auto& [name, kernel] : kernels->items()) hashed[obfuscated_name(name)] = std::move(kernel);
  answers->erase("kernels");
  (*answers)["hashed_kernels"] = std::move(hashed);
}

}  // namespace

bool matches(const PackFilter& filter, const Digest128& key, const nlohmann::json& sidecar) {
  if (!filter.keys.empty() && std::find(filter.keys.begin(), filter.keys.end(), key) == filter.keys.end()) {
    return false;
  }
  if (!sidecar.is_object()) return false;
  if (!filter.device.empty() && !contains(text_of(sidecar, "device"), filter.device)) return false;
  if (!filter.app.empty() && !contains(text_of(sidecar, "created_by"), filter.app)) return false;
  if (!filter.label.empty() && text_of(sidecar, "label") != filter.label) return false;
  if (!filter.since.empty() && text_of(sidecar, "created") < filter.since) return false;
  if (!filter.kernel.empty()) {
    auto names = sidecar.find("kernel_names");
    if (names == sidecar.end() || !names->is_array() ||
        std::find(names->begin(), names->end(), nlohmann::json(filter.kernel)) == names->end()) {
      return false;
    }
  }
  if (!filter.driver.empty()) {
    auto components = sidecar.find("components");
    if (components == sidecar.end() || !components->is_object()) return false;
    std::string identity;
    for (const char* name : {"device", "compiler"}) {
      if (auto it = components->find(name); it != components->end()) {
        identity += it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
    }
    if (!contains(identity, filter.driver)) return false;
  }
  return true;
}

void strip_sidecar(nlohmann::json* sidecar) {
  if (!sidecar->is_object()) return;
  sidecar->erase("build_log");
  strip_answers(sidecar);
  sidecar->erase("inputs");  // recorded build inputs, when a store has them
  if (auto components = sidecar->find("components"); components != sidecar->end()) drop_texts(&*components);
}

void obfuscate_sidecar(nlohmann::json* sidecar) {
  strip_sidecar(sidecar);
  if (!sidecar->is_object()) return;
  obfuscate_answers(sidecar);
  if (auto label = sidecar->find("label"); label != sidecar->end() && label->is_string()) {
    *label = obfuscated_name(label->get<std::string>());
  }
  if (auto names = sidecar->find("kernel_names"); names != sidecar->end() && names->is_array()) {
    for (auto& name : *names) {
      if (name.is_string()) name = obfuscated_name(name.get<std::string>());
    }
  }
  if (sidecar->contains("created_by")) (*sidecar)["created_by"] = obfuscated_name(text_of(*sidecar, "created_by"));
  if (auto components = sidecar->find("components"); components != sidecar->end() && components->is_object()) {
    for (const char* name : {"input", "headers", "options", "environment", "spec_constants"}) {
      if (auto it = components->find(name); it != components->end() && it->is_object()) it->erase("value");
    }
  }
}

std::optional<std::string> since_time(const std::string& text) {
  if (text.empty()) return std::string();
  if (std::optional<std::uint64_t> seconds = parse_duration_s(text)) {
    const std::time_t then = std::time(nullptr) - static_cast<std::time_t>(*seconds);
    std::tm utc{};
    gmtime_r(&then, &utc);
    char out[32];
    std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &utc);
    return std::string(out);
  }
  if (text.size() >= 10 && text[4] == '-' && text[7] == '-') return text;  // 2026-11-24[T...]
  return std::nullopt;
}

}  // namespace jitcache::tool

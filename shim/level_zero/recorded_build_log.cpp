#include "shim/level_zero/recorded_build_log.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hashing/bounded_json.hpp"
#include "shim/level_zero/next_functions.hpp"

namespace jitcache::level_zero {
namespace {

constexpr std::size_t kMaxBuildLogBytes = 1u << 20;  // far above real logs

struct State {
  std::mutex mutex;
  std::unordered_map<ze_module_build_log_handle_t, std::shared_ptr<const std::string>> logs;
};

State& state() {
  static State* s = new State;  // never destroyed: hooks may run during exit
  return *s;
}

std::shared_ptr<const std::string> find(ze_module_build_log_handle_t handle) {
  std::lock_guard lock(state().mutex);
  auto it = state().logs.find(handle);
  return it == state().logs.end() ? nullptr : it->second;
}

}  // namespace

nlohmann::json answers_json(const std::string& build_log, std::string* problem) {
  if (build_log.size() > kMaxBuildLogBytes) {
    *problem = "build log longer than " + std::to_string(kMaxBuildLogBytes) + " bytes";
    return nullptr;
  }
  return {{"version", kAnswersVersion}, {"build_log", build_log}};
}

std::shared_ptr<const std::string> recorded_log(const std::string* answers_text, std::string* problem) {
  if (!answers_text) {
    *problem = "recorded answers missing (an entry written before they were recorded)";
    return nullptr;
  }
  // Level Zero's record is two fields: an nlohmann tree of it costs little.
  const nlohmann::json answers = parse_untrusted_json(*answers_text);
  if (!answers.is_object()) {
    *problem = "recorded answers are not an object";
    return nullptr;
  }
  auto version = answers.find("version");
  auto log = answers.find("build_log");
  if (version == answers.end() || !version->is_number_integer() || version->get<std::int64_t>() != kAnswersVersion) {
    *problem = "recorded answers are of another version";
    return nullptr;
  }
  if (log == answers.end() || !log->is_string() || log->get_ref<const std::string&>().size() > kMaxBuildLogBytes) {
    *problem = "recorded answers have no valid build_log";
    return nullptr;
  }
  return std::make_shared<const std::string>(log->get<std::string>());
}

void answer_log_handle(ze_module_build_log_handle_t handle, std::shared_ptr<const std::string> log) {
  std::lock_guard lock(state().mutex);
  state().logs[handle] = std::move(log);
}

ze_result_t build_log_get_string(ze_module_build_log_handle_t handle, size_t* size, char* text) {
  std::shared_ptr<const std::string> log = handle ? find(handle) : nullptr;
  if (!log) return next().zeModuleBuildLogGetString(handle, size, text);
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // The two-call pattern: a null buffer (or size 0) asks for the size, NUL included.
  if (!text || *size == 0) {
    *size = log->size() + 1;
    return ZE_RESULT_SUCCESS;
  }
  const std::size_t copied = std::min(log->size(), *size - 1);
  std::memcpy(text, log->data(), copied);
  text[copied] = '\0';
  *size = copied + 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t build_log_destroy(ze_module_build_log_handle_t handle) {
  ze_result_t result = next().zeModuleBuildLogDestroy(handle);
  if (result == ZE_RESULT_SUCCESS && handle) {
    std::lock_guard lock(state().mutex);
    state().logs.erase(handle);
  }
  return result;
}

}  // namespace jitcache::level_zero

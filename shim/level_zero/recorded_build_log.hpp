// The build log of a module served from the cache: the app asked for the log of a SPIR-V compile
// and the driver made one for loading a native binary. The SPIR-V compile's log is recorded with
// the entry (sidecar "answers", versioned, capped, parsed as hostile input) and the app's log
// handle answers it (zeModuleBuildLogGetString) until destroyed.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <ze_api.h>

namespace jitcache::level_zero {

// Bump on any change of the record's shape: a record of another version is not served.
inline constexpr int kAnswersVersion = 1;

// The sidecar's "answers" for a real build's log; null with `problem` set when over the cap.
nlohmann::json answers_json(const std::string& build_log, std::string* problem);
// The recorded log of a hit's answers (Lookup::answers: JSON text, null when the entry has none);
// null with `problem` set when absent or malformed.
std::shared_ptr<const std::string> recorded_log(const std::string* answers_text, std::string* problem);

// The app's log handle answers `log` from now on.
void answer_log_handle(ze_module_build_log_handle_t handle, std::shared_ptr<const std::string> log);

// Hooks (exported as zeModuleBuildLogGetString / zeModuleBuildLogDestroy).
ze_result_t build_log_get_string(ze_module_build_log_handle_t handle, size_t* size, char* text);
ze_result_t build_log_destroy(ze_module_build_log_handle_t handle);

}  // namespace jitcache::level_zero

// The environment a capture helper starts with: only what it needs to find the same driver and
// device as the app and to store as the app would, not the rest of the app's environment (an
// app's tokens and passwords are none of the helper's business). docs/decisions/capture.md,
// "What a capture helper inherits", has the list and why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

// Whether the variable `name` passes to the helper.
bool helper_keeps_variable(std::string_view name);

// The entries ("NAME=value") of `environment` (null-terminated, as environ) that pass.
std::vector<std::string> helper_environment(char** environment);

}  // namespace jitcache

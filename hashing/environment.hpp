// The environment variables that change codegen and so belong in the key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Comma- or space-separated names; a trailing '*' matches a prefix.
std::vector<std::string> parse_env_patterns(std::string_view list);

// The variables of `environ` matching any pattern, sorted by name.
std::vector<NameValue> matching_environment(const std::vector<std::string>& patterns);

}  // namespace jitcache

// The environment variables that change codegen and so belong in the key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// Comma- or space-separated names; a trailing '*' matches a prefix. A variable that looks like a
// secret by its name or its value (hashing/secret_look.hpp) is matched only by its own name, never
// by a prefix or `*`.
std::vector<std::string> parse_env_patterns(std::string_view list);

// The variables of `environ` matching any pattern, sorted by name. jitcache's own settings
// (JITCACHE_*, BinaryCacheTrace) never match: they hold secrets (the remote password and HMAC key)
// and do not change codegen, so they must not reach keys, sidecars, records or traces.
std::vector<NameValue> matching_environment(const std::vector<std::string>& patterns);

// Variables through which drivers add compiler flags behind the app's back (PoCL, AMD, Mesa
// Clover). When set they are always part of the key, whatever env_keys says, and their -I and
// -include flags take part in the include scan.
const std::vector<std::string>& driver_flag_variables();

// `patterns` plus the driver flag variables: what the key records.
std::vector<std::string> keyed_patterns(std::vector<std::string> patterns);
// matching_environment(keyed_patterns(patterns)): each variable once, sorted by name.
std::vector<NameValue> keyed_environment(const std::vector<std::string>& patterns);

}  // namespace jitcache

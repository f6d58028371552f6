#include "hashing/environment.hpp"

#include <algorithm>

#ifdef _WIN32
#include <stdlib.h>
#define JITCACHE_ENVIRON _environ
#else
#include <unistd.h>  // environ
#define JITCACHE_ENVIRON environ
#endif

#include "hashing/secret_look.hpp"

namespace jitcache {
namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool matches(std::string_view pattern, std::string_view name) {
  if (!pattern.empty() && pattern.back() == '*') {
    return name.substr(0, pattern.size() - 1) == pattern.substr(0, pattern.size() - 1);
  }
  return name == pattern;
}

bool is_own_setting(std::string_view name) {
  return name.rfind("JITCACHE_", 0) == 0 || name == "BinaryCacheTrace";
}

// A variable that looks like a secret, by its name or its value, is keyed only when a pattern names
// it whole: a prefix or `*` must not publish credentials to the store, the remote and the traces.
bool matches_any(const std::vector<std::string>& patterns, std::string_view name, std::string_view value) {
  const bool secret = name_looks_like_a_secret(name) || value_looks_like_a_secret(value);
  return std::any_of(patterns.begin(), patterns.end(), [name, secret](const std::string& pattern) {
    return pattern == name || (!secret && matches(pattern, name));
  });
}

}  // namespace

std::vector<std::string> parse_env_patterns(std::string_view list) {
  std::vector<std::string> patterns;
  std::size_t position = 0;
  while (position < list.size()) {
    while (position < list.size() && is_separator(list[position])) ++position;
    const std::size_t start = position;
    while (position < list.size() && !is_separator(list[position])) ++position;
    if (position > start) patterns.emplace_back(list.substr(start, position - start));
  }
  return patterns;
}

std::vector<NameValue> matching_environment(const std::vector<std::string>& patterns) {
  std::vector<NameValue> matched;
  if (patterns.empty() || JITCACHE_ENVIRON == nullptr) return matched;
  for (char** entry = JITCACHE_ENVIRON; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t equals = text.find('=');
    // "=C:=..." style entries (Windows) and malformed ones without '=' have no usable name.
    if (equals == std::string_view::npos || equals == 0) continue;
    const std::string_view name = text.substr(0, equals);
    const std::string_view value = text.substr(equals + 1);
    if (!is_own_setting(name) && matches_any(patterns, name, value)) matched.emplace_back(name, value);
  }
  std::sort(matched.begin(), matched.end());
  return matched;
}

const std::vector<std::string>& driver_flag_variables() {
  static const std::vector<std::string> names = {"POCL_EXTRA_BUILD_FLAGS", "AMD_OCL_BUILD_OPTIONS",
                                                 "AMD_OCL_BUILD_OPTIONS_APPEND", "CLOVER_EXTRA_BUILD_OPTIONS",
                                                 "CLOVER_EXTRA_COMPILE_OPTIONS"};
  return names;
}

std::vector<std::string> keyed_patterns(std::vector<std::string> patterns) {
  patterns.insert(patterns.end(), driver_flag_variables().begin(), driver_flag_variables().end());
  return patterns;
}

// matching_environment visits each variable of environ once, so a name matched by two patterns
// appears once.
std::vector<NameValue> keyed_environment(const std::vector<std::string>& patterns) {
  return matching_environment(keyed_patterns(patterns));
}

}  // namespace jitcache

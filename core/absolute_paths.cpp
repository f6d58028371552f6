#include "core/absolute_paths.hpp"

#include <cstdlib>
#include <system_error>

#include "core/platform.hpp"

namespace jitcache {
namespace {

std::string absolute_path(std::string_view path, const std::filesystem::path& base) {
  const std::filesystem::path given{std::string(path)};
  return given.is_absolute() ? std::string(path) : (base / given).lexically_normal().string();
}

}  // namespace

std::string absolute_paths(std::string_view value, const std::filesystem::path& base, bool list) {
#if defined(_WIN32)  // ':' is part of a Windows path: left as it is there
  (void)base;
  (void)list;
  return std::string(value);
#endif
  if (!list) return value.empty() ? std::string() : absolute_path(value, base);
  std::string result;
  std::size_t begin = 0;
  while (begin <= value.size()) {
    std::size_t end = value.find(':', begin);
    if (end == std::string_view::npos) end = value.size();
    if (begin > 0) result += ':';
    if (end > begin) result += absolute_path(value.substr(begin, end - begin), base);
    begin = end + 1;
  }
  return result;
}

void make_path_variables_absolute() {
#if !defined(_WIN32)  // ':' separates lists here; Windows paths have drive letters
  struct Variable {
    const char* name;
    bool list;
  };
  static constexpr Variable kPathVariables[] = {
      {"JITCACHE_DIR", false}, {"JITCACHE_TRACE_DIR", false}, {"JITCACHE_PACKS", true}, {"JITCACHE_PACK_KEYS", true},
      {"JITCACHE_REMOTE_CA_FILE", false}};
  std::error_code error;
  const std::filesystem::path here = std::filesystem::current_path(error);
  if (error) return;  // no working directory (removed): relative paths mean nothing either way
  for (const Variable& variable : kPathVariables) {
    const char* value = std::getenv(variable.name);
    if (!value || !*value) continue;
    const std::string absolute = absolute_paths(value, here, variable.list);
    if (absolute != value) platform::set_environment(variable.name, absolute);
  }
#endif
}

}  // namespace jitcache

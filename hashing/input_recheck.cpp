#include "hashing/input_recheck.hpp"

#include <fstream>
#include <iterator>
#include <optional>

#include <filesystem>

#ifndef _WIN32
#include <sys/stat.h>
#else
#include <windows.h>
#endif

namespace jitcache {
namespace {

// The later of the file's modification and status-change times, in ns since the epoch: ctime
// catches a content change whose mtime was set back (touch -d, some checkouts and extractors).
std::optional<std::int64_t> last_change_ns(const std::string& path) {
#ifndef _WIN32
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  const std::int64_t mtime = std::int64_t{info.st_mtim.tv_sec} * 1'000'000'000 + info.st_mtim.tv_nsec;
  const std::int64_t ctime = std::int64_t{info.st_ctim.tv_sec} * 1'000'000'000 + info.st_ctim.tv_nsec;
  return mtime > ctime ? mtime : ctime;
#else
  // Windows has no ctime; the last write time (FILETIME: 100 ns ticks since 1601) is the signal,
  // the re-hash below catches the rest.
  WIN32_FILE_ATTRIBUTE_DATA data{};
  if (!GetFileAttributesExW(std::filesystem::path(path).c_str(), GetFileExInfoStandard, &data)) return std::nullopt;
  const std::int64_t ticks =
      (std::int64_t{data.ftLastWriteTime.dwHighDateTime} << 32) | data.ftLastWriteTime.dwLowDateTime;
  return (ticks - 116444736000000000) * 100;
#endif
}

std::optional<Digest128> digest_of(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return std::nullopt;
  return xxh3_128(contents);
}

}  // namespace

std::string changed_input(const std::vector<HeaderDependency>& headers, std::int64_t inputs_read_at_ns) {
  for (const HeaderDependency& header : headers) {
    // Only files the scan read: clCompileProgram's input_headers live in memory (no absolute path).
    if (!header.found || !std::filesystem::path(header.path).is_absolute()) continue;
    const std::optional<std::int64_t> changed_at = last_change_ns(header.path);
    if (!changed_at) return header.path + " is gone";
    if (*changed_at >= inputs_read_at_ns - kFileClockSlackNs) {
      return header.path + " was modified after it was hashed (include file too new)";
    }
    const std::optional<Digest128> digest = digest_of(header.path);
    if (!digest || !(*digest == header.digest)) return header.path + " has other contents than when it was hashed";
  }
  return {};
}

}  // namespace jitcache

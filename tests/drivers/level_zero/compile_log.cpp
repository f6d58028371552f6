#include "compile_log.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "driver_settings.hpp"

namespace jitcache::test_ze {

bool record_compile(std::string_view build_digest_hex) {
  const char* path = compile_log_path();
  if (path == nullptr) return true;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::string line = "compile ";
  line.append(build_digest_hex);
  line.push_back('\n');
  ssize_t written;
  do {
    written = ::write(fd, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  const bool closed = ::close(fd) == 0;
  return written == static_cast<ssize_t>(line.size()) && closed;
}

}  // namespace jitcache::test_ze

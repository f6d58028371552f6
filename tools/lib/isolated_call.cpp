#include "tools/lib/isolated_call.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitcache::tool {
namespace {

using Clock = std::chrono::steady_clock;

// In the child: whatever happens, exit without running the parent's atexit handlers or flushing
// its stdio buffers a second time.
[[noreturn]] void answer_and_exit(int fd, const std::function<nlohmann::json()>& work) {
  std::string text;
  try {
    text = work().dump();
  } catch (const std::exception& error) {
    text = nlohmann::json{{"isolated_call_error", error.what()}}.dump();
  }
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(1);
    written += static_cast<std::size_t>(n);
  }
  ::_exit(0);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return {};
}

}  // namespace

IsolatedAnswer call_isolated(const std::function<nlohmann::json()>& work, std::chrono::seconds limit) {
  IsolatedAnswer answer;
  int fds[2];
  if (::pipe(fds) != 0) {
    answer.failure = std::string("pipe: ") + std::strerror(errno);
    return answer;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    answer.failure = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return answer;
  }
  if (child == 0) {
    ::close(fds[0]);
    answer_and_exit(fds[1], work);
  }
  ::close(fds[1]);
  std::string text;
  const Clock::time_point deadline = Clock::now() + limit;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd ready{fds[0], POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) {
      timed_out = polled == 0;
      break;
    }
    char buffer[65536];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of the answer
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    answer.failure = "did not answer within " + std::to_string(limit.count()) + " s";
    return answer;
  }
  if (std::string failed = describe_status(status); !failed.empty()) {
    answer.failure = failed;
    return answer;
  }
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded()) {
    answer.failure = "answered something that is not JSON";
  } else if (value.is_object() && value.contains("isolated_call_error")) {
    answer.failure = "failed: " + value["isolated_call_error"].get<std::string>();
  } else {
    answer.value = std::move(value);
  }
  return answer;
}

}  // namespace jitcache::tool

#include "test_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace jitcache::testing {
namespace {

std::vector<std::string> child_environment(const RunOptions& options) {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; *entry; ++entry) {
    std::string text = *entry;
    std::size_t equals = text.find('=');
    if (equals != std::string::npos) vars[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const std::string& name : options.unset) vars.erase(name);
  for (const auto& [name, value] : options.env) vars[name] = value;
  std::vector<std::string> result;
  for (const auto& [name, value] : vars) result.push_back(name + "=" + value);
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Reads both pipes until the child closes them or the deadline passes.
bool drain(int out_fd, int err_fd, RunResult& result, std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  return true;
}

}  // namespace

RunResult run(const std::vector<std::string>& argv, const RunOptions& given) {
  // PoCL 3.1 keeps scratch files under POCL_CACHE_DIR (default ~/.cache/pocl) and aborts when a
  // concurrent process removes them ("Can't get stat()"): tests run in parallel, so each run gets
  // its own unless the test chose one.
  RunOptions options = given;
  std::optional<TempDir> pocl_scratch;
  if (!options.env.count("POCL_CACHE_DIR")) {
    pocl_scratch.emplace();
    options.env["POCL_CACHE_DIR"] = pocl_scratch->path().string();
  }
  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(options);
  std::vector<char*> c_args = c_strings(args);
  std::vector<char*> c_env = c_strings(env);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (options.run_as_uid && (::setgid(*options.run_as_uid) != 0 || ::setuid(*options.run_as_uid) != 0)) _exit(126);
    ::execve(c_args[0], c_args.data(), c_env.data());
    _exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  RunResult result;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  if (!drain(out_pipe[0], err_pipe[0], result, deadline)) {
    ::kill(pid, SIGKILL);
    result.err += "\n[test harness: killed after " + std::to_string(options.timeout_s) + " s]";
  }
  for (int fd : {out_pipe[0], err_pipe[0]}) ::close(fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // Only a run that may start helpers (auto is the default): a test that holds a build lock itself
  // (a stopped builder) turns wait_for_capture_helpers off.
  auto capture = options.env.find("JITCACHE_CAPTURE");
  const char* inherited_capture = std::getenv("JITCACHE_CAPTURE");
  const bool unset = std::find(options.unset.begin(), options.unset.end(), "JITCACHE_CAPTURE") != options.unset.end();
  const std::string capture_mode = capture != options.env.end() ? capture->second
                                   : inherited_capture && !unset ? inherited_capture
                                                                 : "auto";
  if (options.wait_for_capture_helpers && (capture_mode == "auto" || capture_mode == "helper")) {
    auto root = options.env.find("JITCACHE_DIR");
    const char* inherited = std::getenv("JITCACHE_DIR");
    if (!options.cache_root.empty()) wait_for_captures(options.cache_root);
    else if (root != options.env.end()) wait_for_captures(root->second);
    else if (inherited && *inherited) wait_for_captures(inherited);
  }
  return result;
}

void wait_for_captures(const std::filesystem::path& cache_root) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cache_root / "locks", ec)) {
    // A helper whose app has gone holds its `.ending` marker until its last write.
    if (entry.path().extension() != ".capture" && entry.path().extension() != ".ending") continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);  // never created here
    if (fd < 0) continue;  // released (and removed) meanwhile
    while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
    }
    ::close(fd);
  }
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "jitcache-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  path_ = pattern;
}

TempDir::TempDir(const std::filesystem::path& parent) {
  std::string pattern = (parent / "jitcache-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  path_ = pattern;
}

std::vector<std::filesystem::path> copy_for_another_user(const std::vector<std::filesystem::path>& files,
                                                         const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  constexpr fs::perms kOthersMayRun = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec;
  fs::create_directories(folder);
  fs::permissions(folder, kOthersMayRun);
  std::vector<fs::path> copies;
  for (const fs::path& file : files) {
    const fs::path copy = folder / file.filename();
    fs::copy_file(file, copy, fs::copy_options::overwrite_existing);
    fs::permissions(copy, kOthersMayRun);
    copies.push_back(copy);
  }
  return copies;
}

std::filesystem::path trusted_temp_parent(std::string* why) {
  const std::filesystem::path parent = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "trusted-tmp";
  std::filesystem::create_directories(parent);
  std::filesystem::permissions(parent, std::filesystem::perms::owner_all);
  for (std::filesystem::path folder = parent;; folder = folder.parent_path()) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0 || (st.st_uid != ::geteuid() && st.st_uid != 0) ||
        ((st.st_mode & 0022) && !(st.st_mode & S_ISVTX))) {
      *why = "the build tree's folder " + folder.string() + " may be written by others: no program of it is trusted";
      return {};
    }
    if (folder == folder.parent_path()) return parent;
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::vector<nlohmann::json> read_traces(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> traces;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    traces.push_back(nlohmann::json::parse(in));
  }
  return traces;
}

std::map<std::string, int> count_verdicts(const std::vector<nlohmann::json>& traces) {
  std::map<std::string, int> counts;
  for (const nlohmann::json& trace : traces) ++counts[trace.value("verdict", "?")];
  return counts;
}

int CachedRun::count(const std::string& kind, const std::string& verdict) const {
  int n = 0;
  for (const auto& trace : traces) n += trace.value("kind", "") == kind && trace.value("verdict", "") == verdict;
  return n;
}

RunResult run_plain(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra) {
  RunOptions options;
  options.env = {{"POCL_KERNEL_CACHE", "0"}};
  for (const auto& [name, value] : extra) options.env[name] = value;
  options.unset = {"LD_PRELOAD", "OPENCL_LAYERS"};
  return run(argv, options);
}

CachedRun run_traced(const std::vector<std::string>& argv, const RunOptions& options,
                     const std::filesystem::path& trace_dir) {
  CachedRun cached;
  cached.result = run(argv, options);
  for (nlohmann::json& trace : read_traces(trace_dir)) {
    (trace.contains("capture_helper") ? cached.helper_traces : cached.traces).push_back(std::move(trace));
  }
  cached.verdicts = count_verdicts(cached.traces);
  return cached;
}

std::vector<std::filesystem::path> entry_files(const std::filesystem::path& cache_root) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(cache_root, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".entry" && it->path().parent_path().parent_path().parent_path() == cache_root) {
      files.push_back(it->path());
    }
  }
  return files;
}

std::int64_t stats_counter(const std::filesystem::path& tool, const std::filesystem::path& cache_root,
                           const std::string& name) {
  RunOptions options;
  options.env = {{"JITCACHE_DIR", cache_root.string()}};
  options.unset = {"LD_PRELOAD"};
  RunResult result = run({tool.string(), "stats", "--json"}, options);
  nlohmann::json stats = nlohmann::json::parse(result.out, nullptr, false);
  if (stats.is_discarded() || !stats["counters"].contains(name)) return 0;
  return stats["counters"][name].get<std::int64_t>();
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
}

void copy_sources(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  const auto ns_of = [](const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  std::int64_t last_change = 0;
  for (const auto& file : std::filesystem::recursive_directory_iterator(to)) {
    struct stat info {};
    if (::stat(file.path().c_str(), &info) == 0) last_change = std::max(last_change, ns_of(info.st_ctim));
  }
  constexpr std::int64_t kOldEnoughNs = 50'000'000;  // the slack is 20 ms
  wait_until([&] {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return ns_of(now) - last_change > kOldEnoughNs;
  });
}

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace jitcache::testing

// What the integration tests share: running a real app with a chosen environment, temp dirs,
// and reading the traces and store a run left behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace jitcache::testing {

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

struct RunOptions {
  std::map<std::string, std::string> env;  // added to (or replacing) the test's environment
  std::vector<std::string> unset;          // removed from it
  std::optional<unsigned> run_as_uid;      // drop privileges in the child (tests run as root in CI)
  int timeout_s = 300;
  // After a run with JITCACHE_CAPTURE=auto (the default) or helper, wait until the capture helpers
  // it left behind are done, on the product's own signal: every key the app handed to its helper
  // has a capture marker (JITCACHE_DIR/locks/<key>.capture), created before the app exits and held
  // until the entry is stored (the helper's trace and stats written) or given up, so taking each
  // once tells they are (docs/concurrency.md, "Captures in flight"); and each helper whose app
  // has gone holds locks/helper-<pid>.ending until its last write (its counts, even with no key).
  // Off to see what the app alone
  // did, or when the test pauses the helpers itself (the wait would never end).
  bool wait_for_capture_helpers = true;
  // The cache whose markers to wait on when JITCACHE_DIR is not in the environment (the tool's
  // --dir). The wait must happen inside run(): the run's PoCL scratch folder, which the helpers
  // use, is removed when run() returns.
  std::filesystem::path cache_root;
};

RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// The app without jitcache (LD_PRELOAD and OPENCL_LAYERS removed), PoCL's own kernel cache off as
// in the cached runs it is compared with; `extra` is added to the environment.
RunResult run_plain(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra = {});

// A fresh directory under the system temp dir (or under `parent`), removed with its contents at
// the end of scope.
class TempDir {
 public:
  TempDir();
  explicit TempDir(const std::filesystem::path& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Where a test may put a program or library for jitcache to run (store/files/trusted_file.hpp): a folder
// next to the test binary, in the build tree, not in /tmp (a folder others can write, sticky or
// not, is refused for code). Empty, with `why`, when the build tree itself is in such a place.
std::filesystem::path trusted_temp_parent(std::string* why);

// For a test that runs something as another user: copies `files` into `folder` (created), the
// folder and every copy mode 0755, and returns the copies' paths in order. The build tree may be in
// a folder that user cannot enter (a clone in root's home, mode 700 on Debian), so run the copies.
// A program copied here still finds the system's libraries; jitcache's library copied alone finds
// no capture helper next to it, so `auto` captures in the app (docs/settings.md).
std::vector<std::filesystem::path> copy_for_another_user(const std::vector<std::filesystem::path>& files,
                                                         const std::filesystem::path& folder);

std::vector<nlohmann::json> read_traces(const std::filesystem::path& dir);

// Takes and drops every capture marker and helper ending marker under <cache_root>/locks, waiting
// for their holders.
void wait_for_captures(const std::filesystem::path& cache_root);
std::map<std::string, int> count_verdicts(const std::vector<nlohmann::json>& traces);

// A run under the shim: what the app printed, the traces it left in `trace_dir`, their verdicts.
struct CachedRun {
  RunResult result;
  std::vector<nlohmann::json> traces;  // the app's own
  std::map<std::string, int> verdicts;
  std::vector<nlohmann::json> helper_traces;  // its capture helpers' (they have "capture_helper")

  int count(const std::string& kind, const std::string& verdict) const;  // traces of that kind and verdict
};
CachedRun run_traced(const std::vector<std::string>& argv, const RunOptions& options,
                     const std::filesystem::path& trace_dir);
std::vector<std::filesystem::path> entry_files(const std::filesystem::path& cache_root);  // every <key>.entry
// `tool stats --json`'s counter `name` for the cache at `cache_root` (0 when it has none).
std::int64_t stats_counter(const std::filesystem::path& tool, const std::filesystem::path& cache_root,
                           const std::string& name);
std::string read_text(const std::filesystem::path& file);
void write_text(const std::filesystem::path& file, const std::string& text);

// Copies a folder of kernel sources as a user's checkout holds them: returns once every copy was
// changed longer ago than a build's "include file too new" slack (20 ms, hashing/input_recheck.hpp),
// so that an app started at once does not find a header just written and leave its program
// uncached (on a fast machine the first build comes 20-30 ms after the copy).
void copy_sources(const std::filesystem::path& from, const std::filesystem::path& to);

// Calls `done` until it returns true or `limit` passes (a bounded wait for another process's
// effect, never a timing assertion). Returns the last result.
bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(20));

}  // namespace jitcache::testing

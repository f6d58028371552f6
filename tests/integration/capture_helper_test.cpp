// capture = auto (the default; the capture helper on PoCL) on real PoCL through the real ICD
// loader: the app reads no binary; a detached `jitcache replay --helper` stores the entry. The app
// hands each key's build lock to its helper, so a run started right after the app exits waits for
// the helper and hits, and test_support's run() waits for the helpers by taking those locks (no
// sleeps). JITCACHE_TEST_HELPER_DIES kills a helper's child between its build and its store.
#include <fstream>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <thread>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

class CaptureHelper : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path kernels = tmp / "kernels";
  int runs = 0;

  void SetUp() override { fs::copy(EXAMPLE_KERNELS, kernels, fs::copy_options::recursive); }

  // A run under the shim with capture = auto (+ `extra`). Its PoCL scratch folder outlives
  // the run: the app's helpers use it after the app is gone.
  CachedRun run_app(std::vector<std::string> argv, std::map<std::string, std::string> extra = {},
                    bool wait_for_helpers = true) {
    const std::string n = std::to_string(++runs);
    fs::path trace_dir = tmp / ("traces-" + n);
    RunOptions options;
    options.env = {{"JITCACHE_DIR", cache.string()},       {"POCL_KERNEL_CACHE", "0"},
                   {"POCL_CACHE_DIR", (tmp / ("pocl-" + n)).string()}, {"LD_PRELOAD", JITCACHE_LIBRARY},
                   {"JITCACHE_TRACE", "1"},                 {"JITCACHE_TRACE_DIR", trace_dir.string()},
                   {"PYOPENCL_NO_CACHE", "1"},              {"PYOPENCL_CTX", "0"}};
    options.env["JITCACHE_CAPTURE"] = "auto";
    options.wait_for_capture_helpers = wait_for_helpers;
    for (auto& [name, value] : extra) options.env[name] = value;
    return run_traced(argv, options, trace_dir);
  }

  RunResult run_plain(std::vector<std::string> argv) {
    RunOptions options;
    options.env = {{"POCL_KERNEL_CACHE", "0"}, {"PYOPENCL_NO_CACHE", "1"}, {"PYOPENCL_CTX", "0"}};
    options.unset = {"LD_PRELOAD"};
    return run(argv, options);
  }

  std::int64_t counter(const std::string& name) { return stats_counter(JITCACHE_TOOL, cache, name); }

  std::vector<std::string> example() const { return {OPENCL_EXAMPLE, "--kernels", kernels.string()}; }

  // How many of the cache's build locks someone holds now.
  int held_locks() const {
    int held = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(cache / "locks", ec)) {
      if (entry.path().extension() != ".lock") continue;
      const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) ++held;
      ::close(fd);
    }
    return held;
  }

  // A run whose helpers store nothing (`extra` breaks them): the app's own results are unaffected.
  CachedRun run_storing_nothing(const RunResult& plain, std::map<std::string, std::string> extra) {
    CachedRun ran = run_app(example(), std::move(extra));
    EXPECT_EQ(ran.result.exit_code, 0) << ran.result.err;
    EXPECT_EQ(ran.result.out, plain.out);
    EXPECT_EQ(entry_binaries(cache).size(), 0u);
    return ran;
  }

  // After a run whose helpers stored nothing: the next run misses both programs (no entry the
  // driver could refuse), stays correct and its helpers store them; the one after hits both.
  void expect_next_runs_miss_then_hit(const RunResult& plain) {
    CachedRun again = run_app(example());
    EXPECT_EQ(again.result.exit_code, 0) << again.result.err;
    EXPECT_EQ(again.result.out, plain.out);
    EXPECT_EQ(again.verdicts["miss"], 2) << "a miss, not a stored entry the driver refused";
    EXPECT_EQ(counter("stale_rejected"), 0);
    EXPECT_EQ(entry_binaries(cache).size(), 2u);
    CachedRun warm_run = run_app(example());
    EXPECT_EQ(warm_run.result.out, plain.out);
    EXPECT_EQ(warm_run.verdicts["hit"], 2);
  }

  // The next run's helpers pause before they build (JITCACHE_TEST_HELPER_PAUSE_FIFO) until the test
  // writes one byte per helper to `gate`: this process holds the FIFO open for writing, so the
  // helpers' open returns at once. The test closes `gate`.
  std::map<std::string, std::string> pausing_helpers() {
    const fs::path fifo = tmp / "helper-gate";
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    gate = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(gate, 0);
    return {{"JITCACHE_TEST_HELPER_PAUSE_FIFO", fifo.string()}};
  }
  int gate = -1;

  bool has_pyopencl() { return run({"/usr/bin/python3", "-c", "import pyopencl"}).exit_code == 0; }
};

void expect_success(const RunResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("all results correct"), std::string::npos) << result.out;
}

int captured_outside(const CachedRun& run) {
  return static_cast<int>(std::count_if(run.traces.begin(), run.traces.end(), [](const nlohmann::json& trace) {
    return trace.value("reason", std::string()).find("captured outside the app by helper") != std::string::npos;
  }));
}

std::int64_t monotonic_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST_F(CaptureHelper, ByDefaultTheHelperStoresWhatTheAppBuiltAndTheNextRunIsAllHits) {
  RunResult plain = run_plain(example());
  expect_success(plain);
  CachedRun first = run_app(example());
  expect_success(first.result);
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.verdicts["miss"], 2);
  EXPECT_EQ(captured_outside(first), 2);
  // The helpers' work is visible: their trace records name the app; stats count their builds as
  // captures, not as misses of their own.
  ASSERT_EQ(first.helper_traces.size(), 2u);
  for (const auto& trace : first.helper_traces) {
    EXPECT_EQ(trace["capture_helper"]["for_pid"], first.traces.front()["pid"]) << trace.dump();
    EXPECT_GT(trace["timings_us"]["load_check"].get<std::int64_t>(), 0) << "the helper loaded its binary back";
  }
  EXPECT_EQ(counter("capture_helper_started"), 2);
  EXPECT_EQ(counter("misses"), 2);
  EXPECT_EQ(counter("captured_by_helper"), 2);
  EXPECT_EQ(counter("stores"), 2);
  EXPECT_EQ(entry_binaries(cache).size(), 2u);

  CachedRun second = run_app(example());
  expect_success(second.result);
  EXPECT_EQ(second.result.out, plain.out);
  EXPECT_EQ(second.verdicts["hit"], 2);
  EXPECT_EQ(second.traces.size(), 2u);
}

// The app hands each key's build lock to its helper: a run started the moment the first exits
// waits for the helpers and hits, without any wait in the test.
TEST_F(CaptureHelper, TheRunRightAfterAColdRunHits) {
  CachedRun first = run_app(example(), {}, /*wait_for_helpers=*/false);
  expect_success(first.result);
  ASSERT_EQ(captured_outside(first), 2);
  CachedRun second = run_app(example(), {}, /*wait_for_helpers=*/false);
  expect_success(second.result);
  EXPECT_EQ(second.result.out, first.result.out);
  EXPECT_EQ(second.verdicts["hit"], 2) << second.result.err;
}

// The handover itself: the moment the app has exited, the build lock of every key it missed is
// held (by its helpers, paused here on a FIFO before they build), so nobody can build them again.
TEST_F(CaptureHelper, WhenTheAppExitsItsHelpersHoldTheLockOfEveryKeyItMissed) {
  CachedRun first = run_app(example(), pausing_helpers(), false);
  expect_success(first.result);
  ASSERT_EQ(captured_outside(first), 2);
  EXPECT_EQ(held_locks(), 2);
  EXPECT_EQ(entry_binaries(cache).size(), 0u);
  ASSERT_EQ(::write(gate, "go", 2), 2);  // one byte for each paused helper
  CachedRun second = run_app(example(), {}, false);
  ::close(gate);
  expect_success(second.result);
  EXPECT_EQ(second.verdicts["hit"], 2) << second.result.err;
}

// The same for a key whose entry the driver refused: the app's lookup hit (no build lock taken),
// the driver rejected the binary, the app rebuilt it and handed it to a helper. The helper must
// hold the key's lock from its start too: before, it took the lock only when its child came to
// build, so a run started right after the app exited (or the tests' wait for helpers) found no lock
// and no entry, and built the key again while the helper stored it.
TEST_F(CaptureHelper, AKeyRebuiltAfterTheDriverRefusedItsEntryIsHandedOverWithItsLock) {
  expect_success(run_app(example()).result);
  ASSERT_EQ(entry_binaries(cache).size(), 2u);
  fs::remove(cache / "size");  // the sidecars change size: the next writer rescans
  // An entry without its answers record is refused at the hit (a malformed record is found only
  // when the app asks a recorded query, which this app does not).
  for (const fs::path& binary : entry_binaries(cache)) {
    const fs::path sidecar = fs::path(binary).replace_extension(".json");
    nlohmann::json meta = nlohmann::json::parse(read_text(sidecar));
    meta.erase("answers");
    write_text(sidecar, meta.dump());
  }
  CachedRun stale = run_app(example(), pausing_helpers(), false);
  expect_success(stale.result);
  EXPECT_EQ(stale.verdicts["stale"], 2);
  EXPECT_EQ(captured_outside(stale), 2);
  EXPECT_EQ(held_locks(), 2);
  ASSERT_EQ(::write(gate, "go", 2), 2);
  CachedRun next = run_app(example(), {}, false);
  ::close(gate);
  expect_success(next.result);
  EXPECT_EQ(next.verdicts["hit"], 2) << next.result.err;
}

// The app's PoCL scratch folder may be gone when its helpers build (a throw-away POCL_CACHE_DIR
// removed at exit, as test harnesses and batch jobs do, even while a helper builds in it): each
// helper builds in a folder of its own. A file in the folder's place makes "gone" deterministic.
TEST_F(CaptureHelper, HelpersBuildAfterTheAppsScratchFolderIsRemoved) {
  CachedRun first = run_app(example(), pausing_helpers(), false);
  expect_success(first.result);
  ASSERT_EQ(captured_outside(first), 2);
  const fs::path app_scratch = tmp / ("pocl-" + std::to_string(runs));
  ASSERT_TRUE(fs::exists(app_scratch));
  fs::remove_all(app_scratch);
  std::ofstream(app_scratch) << "not a folder";
  ASSERT_EQ(::write(gate, "go", 2), 2);
  CachedRun second = run_app(example(), {}, false);
  ::close(gate);
  expect_success(second.result);
  EXPECT_EQ(second.result.out, first.result.out);
  EXPECT_EQ(second.verdicts["hit"], 2) << second.result.err;
  EXPECT_EQ(counter("captured_by_helper"), 2);
  EXPECT_EQ(counter("capture_helper_failed"), 0);
}

// `auto` without a `jitcache` binary to run (a library copied alone, a build without the tool)
// captures in the app, as `build`, instead of handing the entries to a helper that cannot start.
// What a helper builds is what the app builds. PoCL puts two things in a binary that the build's
// inputs do not decide: the path of its temporary source file, below POCL_CACHE_DIR (the app's
// folder; the helper's private one, of another length), and, in a process's second and later
// compiles, another encoding of the same IR (llvm-dis shows the same module). With the
// app's scratch folder as long as the helper's and the app's first program, the app's own entry
// (capture = build) and the helper's have the same size and differ only in the bytes of the random
// names (about 25 of some 78 000; a helper built with other options or for another device would
// differ in thousands).
TEST_F(CaptureHelper, AHelperBuildsTheBinaryTheAppsFirstBuildIs) {
  auto scratch_like_the_helpers = [] {  // tools/commands/replay.cpp PrivateDriverScratch's pattern
    std::string pattern = (fs::temp_directory_path() / "jitcache-replay-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
    return fs::path(pattern);
  };
  // The entry of the example's first program (vector_math.cl: vector_add, saxpy, transform_all).
  auto first_program = [](const fs::path& root) {
    for (const fs::path& binary : entry_binaries(root)) {
      nlohmann::json meta = nlohmann::json::parse(read_text(fs::path(binary).replace_extension(".json")));
      if (meta["kernel_names"].size() == 3) return binary;
    }
    return fs::path();
  };
  std::map<std::string, fs::path> entries;
  for (const std::string capture : {"build", "auto"}) {
    const fs::path scratch = scratch_like_the_helpers();
    const fs::path root = tmp / ("cache-" + capture);
    CachedRun ran = run_app(example(), {{"JITCACHE_CAPTURE", capture}, {"JITCACHE_DIR", root.string()},
                                        {"POCL_CACHE_DIR", scratch.string()}});
    expect_success(ran.result);
    fs::remove_all(scratch);
    entries[capture] = first_program(root);
    ASSERT_FALSE(entries[capture].empty()) << capture;
  }
  nlohmann::json app_meta = nlohmann::json::parse(read_text(fs::path(entries["build"]).replace_extension(".json")));
  nlohmann::json helper_meta = nlohmann::json::parse(read_text(fs::path(entries["auto"]).replace_extension(".json")));
  EXPECT_EQ(fs::path(helper_meta.value("created_by", "")).filename(), "jitcache") << "built by a helper";
  EXPECT_EQ(entries["build"].filename(), entries["auto"].filename()) << "one key";
  const std::string app_binary = read_text(entries["build"]), helper_binary = read_text(entries["auto"]);
  ASSERT_EQ(app_binary.size(), helper_binary.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < app_binary.size(); ++i) differing += app_binary[i] != helper_binary[i];
  EXPECT_LE(differing, 64u) << "of " << app_binary.size() << " bytes";
}

TEST_F(CaptureHelper, AutoWithoutAHelperBinaryCapturesInTheApp) {
  const std::map<std::string, std::string> no_helper = {{"JITCACHE_HELPER", (tmp / "no-such-jitcache").string()}};
  CachedRun first = run_app(example(), no_helper);
  expect_success(first.result);
  EXPECT_EQ(first.verdicts["miss"], 2);
  EXPECT_EQ(captured_outside(first), 0);
  EXPECT_EQ(entry_binaries(cache).size(), 2u);
  CachedRun second = run_app(example(), no_helper);
  expect_success(second.result);
  EXPECT_EQ(second.result.out, first.result.out);
  EXPECT_EQ(second.verdicts["hit"], 2) << second.result.err;
}

TEST_F(CaptureHelper, TwoAppsOfTheSameProgramsAtOnceBuildAndStoreEachKeyOnce) {
  RunResult plain = run_plain(example());
  CachedRun a, b;
  std::thread other([&] { b = run_app(example(), {}, false); });
  a = run_app(example(), {}, false);
  other.join();
  wait_for_build_locks(cache);
  expect_success(a.result);
  expect_success(b.result);
  EXPECT_EQ(a.result.out, plain.out);
  EXPECT_EQ(b.result.out, plain.out);
  EXPECT_EQ(counter("stores"), 2);  // one leader per key, across both apps and their helpers
  CachedRun third = run_app(example());
  EXPECT_EQ(third.verdicts["hit"], 2);
}

// Helpers never compete with the app: of an app's helpers, at most one runs while the app runs
// (the rest start at its exit flush, "at_exit", and build one by one). Checked on the helpers' own
// clock readings.
TEST_F(CaptureHelper, AManyProgramAppHasAtMostOneHelperAliveWhileItRuns) {
  if (!has_pyopencl()) GTEST_SKIP() << "python3-pyopencl not installed";
  const std::vector<std::string> script = {"/usr/bin/python3", PYOPENCL_MANY_PROGRAMS, "6"};
  RunResult plain = run_plain(script);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  CachedRun first = run_app(script, {}, /*wait_for_helpers=*/false);
  const std::int64_t app_ended_us = monotonic_now_us();
  wait_for_build_locks(cache);
  first.helper_traces.clear();
  for (nlohmann::json& trace : read_traces(tmp / ("traces-" + std::to_string(runs)))) {
    if (trace.contains("capture_helper")) first.helper_traces.push_back(std::move(trace));
  }
  ASSERT_EQ(first.result.exit_code, 0) << first.result.err;
  EXPECT_EQ(first.result.out, plain.out);
  EXPECT_EQ(first.verdicts["miss"], 6) << nlohmann::json(first.verdicts).dump();
  ASSERT_EQ(first.helper_traces.size(), 6u);
  std::vector<std::pair<std::int64_t, std::int64_t>> during_app, at_exit;
  for (const auto& trace : first.helper_traces) {
    const auto& helper = trace["capture_helper"];
    (helper["at_exit"] == true ? at_exit : during_app).emplace_back(helper["started_us"], helper["ended_us"]);
  }
  EXPECT_GE(during_app.size(), 1u);  // the first starts at once
  for (const auto& [started, ended] : during_app) EXPECT_LT(started, app_ended_us);
  std::sort(during_app.begin(), during_app.end());
  for (std::size_t i = 1; i < during_app.size(); ++i) {
    EXPECT_GT(during_app[i].first, during_app[i - 1].second) << "two helpers ran at once while the app ran";
  }
  std::sort(at_exit.begin(), at_exit.end());
  for (std::size_t i = 1; i < at_exit.size(); ++i) EXPECT_GT(at_exit[i].first, at_exit[i - 1].second);
  EXPECT_EQ(counter("capture_helper_at_exit"), static_cast<std::int64_t>(at_exit.size()));
  EXPECT_EQ(counter("capture_helper_started"), 6);
  EXPECT_EQ(counter("stores"), 6);
  CachedRun second = run_app(script);
  EXPECT_EQ(second.result.out, plain.out);
  EXPECT_EQ(second.verdicts["hit"], 6);
}

TEST_F(CaptureHelper, WithHelperStartAtExitNoneStartsBeforeTheAppExits) {
  CachedRun first = run_app(example(), {{"JITCACHE_HELPER_START", "at_exit"}});
  expect_success(first.result);
  EXPECT_EQ(counter("capture_helper_at_exit"), 2);
  EXPECT_EQ(counter("capture_helper_started"), 2);
  EXPECT_EQ(entry_binaries(cache).size(), 2u);
}

TEST_F(CaptureHelper, AHelperKilledMidBuildCostsOnlyItsEntry) {
  RunResult plain = run_plain(example());
  run_storing_nothing(plain, {{"JITCACHE_TEST_HELPER_DIES", "after_build"}});
  EXPECT_EQ(counter("capture_helper_died"), 2);

  expect_next_runs_miss_then_hit(plain);
}

// Nothing a helper stores is unproven: it loads the bytes it is about to store in a context of its
// own first. Bytes the driver cannot load (JITCACHE_TEST_REPLAY_BREAKS_BINARY inverts their first
// 16 bytes, PoCL's header, between the read and the check) are not stored, no lock is left behind,
// and the app's next run builds them itself, correct, and stores them through its helpers.
TEST_F(CaptureHelper, ABinaryThatDoesNotLoadBackIsNotStored) {
  RunResult plain = run_plain(example());
  CachedRun broken = run_storing_nothing(plain, {{"JITCACHE_TEST_REPLAY_BREAKS_BINARY", "1"}});
  EXPECT_EQ(counter("stores"), 0);
  EXPECT_EQ(counter("capture_helper_unloadable"), 2);
  EXPECT_EQ(counter("capture_helper_died"), 0);
  ASSERT_EQ(broken.helper_traces.size(), 2u);
  for (const auto& trace : broken.helper_traces) {
    EXPECT_EQ(trace.value("verdict", ""), "failed") << trace.dump();
    EXPECT_NE(trace.value("reason", "").find("did not load back"), std::string::npos) << trace.dump();
  }
  std::error_code ec;
  for (const auto& file : fs::directory_iterator(cache / "locks", ec)) {
    EXPECT_NE(file.path().extension(), ".lock") << "left behind: " << file.path();
  }

  expect_next_runs_miss_then_hit(plain);
}

// A driver that takes the helper's child down while it loads the binary back stores nothing, and
// the helper removes whatever its dead child may have left of the entry.
// Its private PoCL scratch folder is its parent's (tools/lib/replay_scratch.hpp), removed once the
// dead child is reaped: nothing is left in the temp dir either.
TEST_F(CaptureHelper, AHelperThatDiesLoadingItsBinaryBackStoresNothing) {
  RunResult plain = run_plain(example());
  const fs::path temp = tmp / "temp";
  fs::create_directories(temp);
  run_storing_nothing(plain, {{"JITCACHE_TEST_HELPER_DIES", "loading_back"}, {"TMPDIR", temp.string()}});
  EXPECT_EQ(counter("capture_helper_died"), 2);
  std::vector<std::string> left;
  for (const auto& file : fs::directory_iterator(temp)) left.push_back(file.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{}) << "scratch folders of the dead children";
  expect_next_runs_miss_then_hit(plain);
}

TEST_F(CaptureHelper, WithStoreInputsOffTheAppCapturesInline) {
  CachedRun first = run_app(example(), {{"JITCACHE_STORE_INPUTS", "0"}});
  expect_success(first.result);
  EXPECT_EQ(counter("capture_helper_started"), 0);
  EXPECT_EQ(entry_binaries(cache).size(), 2u);
}

}  // namespace
}  // namespace jitcache::testing

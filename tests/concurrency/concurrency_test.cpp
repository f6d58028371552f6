// Many processes on one store, and writers killed at random points. Real processes throughout:
// the stress_worker helper drives the real Engine (as an adapter would) or the DiskStore.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/stats.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/size_ledger.hpp"
#include "stress_payload.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

struct Compile {
  std::uint64_t key;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

struct WorkerReport {
  std::vector<Compile> compiles;
  std::uint64_t hits = 0, mismatches = 0;
  bool summarised = false;
};

WorkerReport parse_report(const std::string& out) {
  WorkerReport report;
  std::istringstream lines(out);
  std::string word;
  while (lines >> word) {
    if (word == "compile") {
      Compile c{};
      lines >> c.key >> c.start_ns >> c.end_ns;
      report.compiles.push_back(c);
    } else if (word == "summary") {
      std::string hits, mismatches, compiles;
      lines >> hits >> mismatches >> compiles;
      report.hits = std::stoull(hits.substr(hits.find('=') + 1));
      report.mismatches = std::stoull(mismatches.substr(mismatches.find('=') + 1));
      report.summarised = true;
    }
  }
  return report;
}

// Runs `count` engine workers at once on one cache and collects their reports.
std::vector<WorkerReport> run_engine_workers(int count, const std::vector<std::string>& args,
                                             const std::map<std::string, std::string>& env) {
  std::vector<std::future<RunResult>> running;
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> argv = {STRESS_WORKER, "engine"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(std::to_string(i + 1));  // seed: each worker its own order
    RunOptions options;
    options.env = env;
    options.unset = {"LD_PRELOAD"};
    running.push_back(std::async(std::launch::async, [argv, options] { return run(argv, options); }));
  }
  std::vector<WorkerReport> reports;
  for (auto& result : running) {
    RunResult done = result.get();
    EXPECT_EQ(done.exit_code, 0) << done.err;
    reports.push_back(parse_report(done.out));
    EXPECT_TRUE(reports.back().summarised) << done.out << done.err;
  }
  return reports;
}

// The store's totals counted straight from the files: committed entries are those with an entry
// file (store format 2: one file each), plus the recorded-inputs files.
SizeInfo count_files(const fs::path& root) {
  SizeInfo totals;
  for (const auto& outer : fs::directory_iterator(root)) {
    if (!outer.is_directory() || outer.path().filename().string().size() != 2) continue;
    for (const auto& inner : fs::directory_iterator(outer)) {
      for (const auto& file : fs::directory_iterator(inner)) {
        if (file.path().extension() != ".entry") continue;
        totals.entries += 1;
        totals.bytes += fs::file_size(file.path());
      }
    }
  }
  // Recorded inputs (store_inputs, docs/store-format.md) count in the bytes, not in the entries.
  if (fs::exists(root / "inputs")) {
    for (const auto& file : fs::recursive_directory_iterator(root / "inputs")) {
      if (file.is_regular_file() && file.path().extension() == ".rec") totals.bytes += fs::file_size(file.path());
    }
  }
  return totals;
}

std::unique_ptr<DiskStore> open_store(const fs::path& root, std::uint64_t max_size = 1ull << 30) {
  StoreLimits limits;
  limits.max_size = max_size;
  std::string error;
  auto store = DiskStore::open(root, limits, &error);
  EXPECT_TRUE(store) << error;
  return store;
}

// Every entry a reader trusts is exactly the payload its sidecar names.
void expect_every_trusted_entry_is_intact(DiskStore& store, std::uint64_t* trusted) {
  for (const EntryInfo& entry : store.list()) {
    LoadResult loaded = store.load(entry.key);
    if (loaded.status != LoadStatus::hit) continue;
    ++*trusted;
    std::optional<stress::PayloadId> id = stress::check_payload(loaded.binary);
    ASSERT_TRUE(id) << "served a binary that is not a complete payload: " << entry.key.hex();
    EXPECT_EQ(id->key, loaded.sidecar.value("n", ~0ull)) << entry.key.hex();
    EXPECT_EQ(id->version, loaded.sidecar.value("version", ~0ull)) << entry.key.hex();
  }
}

std::string describe(const std::vector<VerifyProblem>& problems) {
  std::string text;
  for (const auto& problem : problems) text += problem.path + ": " + problem.problem + "\n";
  return text;
}

TEST(CrossProcessSingleFlight, SixteenColdProcessesCompileEachKeyExactlyOnce) {
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  constexpr int kKeys = 24, kProcesses = 16, kThreads = 2;
  std::vector<WorkerReport> reports = run_engine_workers(
      kProcesses, {std::to_string(kKeys), "1", std::to_string(kThreads), "20000"},
      {{"JITCACHE_DIR", cache.string()}, {"JITCACHE_WAIT_MS", "120000"}});

  std::map<std::uint64_t, int> compiles_per_key;
  std::uint64_t hits = 0, mismatches = 0;
  for (const WorkerReport& report : reports) {
    for (const Compile& c : report.compiles) ++compiles_per_key[c.key];
    hits += report.hits;
    mismatches += report.mismatches;
  }
  EXPECT_EQ(compiles_per_key.size(), static_cast<std::size_t>(kKeys));
  for (const auto& [key, compiles] : compiles_per_key) EXPECT_EQ(compiles, 1) << "key " << key;
  EXPECT_EQ(hits, static_cast<std::uint64_t>(kProcesses * kThreads * kKeys - kKeys));
  EXPECT_EQ(mismatches, 0u);

  auto store = open_store(cache);
  EXPECT_TRUE(store->verify(false).empty()) << describe(store->verify(false));
  SizeInfo recorded = store->size(), counted = count_files(cache);
  EXPECT_EQ(recorded.entries, static_cast<std::uint64_t>(kKeys));
  EXPECT_EQ(recorded.bytes, counted.bytes);
  EXPECT_EQ(recorded.entries, counted.entries);
  std::printf("[ counts   ] %d processes x %d threads x %d keys: %zu compiles, %llu hits\n", kProcesses, kThreads,
              kKeys, compiles_per_key.size(), static_cast<unsigned long long>(hits));
}

TEST(CrossProcessSingleFlight, SixteenProcessesUnderEvictionServeNoBadEntryAndNeverBuildAKeyTwiceAtOnce) {
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  constexpr int kKeys = 48, kProcesses = 16;
  // Payloads average 16 KiB: a 200 KiB store holds about a quarter of the keys, so entries are
  // evicted all the time while other processes load, build and wait for them.
  std::vector<WorkerReport> reports = run_engine_workers(
      kProcesses, {std::to_string(kKeys), "3", "1", "2000"},
      {{"JITCACHE_DIR", cache.string()}, {"JITCACHE_WAIT_MS", "120000"}, {"JITCACHE_MAX_SIZE", "200k"}});

  std::map<std::uint64_t, std::vector<Compile>> by_key;
  std::uint64_t hits = 0, mismatches = 0, compiles = 0;
  for (const WorkerReport& report : reports) {
    for (const Compile& c : report.compiles) by_key[c.key].push_back(c);
    compiles += report.compiles.size();
    hits += report.hits;
    mismatches += report.mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(hits + compiles, static_cast<std::uint64_t>(kProcesses * kKeys * 3));
  // While one process builds a key (from its miss until its entry is committed) every other one
  // waits for it: no two builds of one key ever overlap.
  std::uint64_t overlaps = 0;
  for (auto& [key, list] : by_key) {
    std::sort(list.begin(), list.end(), [](const Compile& a, const Compile& b) { return a.start_ns < b.start_ns; });
    for (std::size_t i = 1; i < list.size(); ++i) overlaps += list[i].start_ns < list[i - 1].end_ns;
  }
  EXPECT_EQ(overlaps, 0u);

  auto store = open_store(cache, 200 * 1024);
  EXPECT_TRUE(store->verify(false).empty()) << describe(store->verify(false));
  // The record was kept exact by every writer: it is clean and equals a count of the files.
  auto record = store_detail::parse_size_record(read_text(cache / "size"));
  ASSERT_TRUE(record);
  EXPECT_FALSE(record->dirty);
  SizeInfo counted = count_files(cache);
  EXPECT_EQ(record->totals.bytes, counted.bytes);
  EXPECT_EQ(record->totals.entries, counted.entries);
  EXPECT_LE(counted.bytes, 200u * 1024);
  const std::int64_t evictions = read_stats(cache)["evictions"];
  EXPECT_GT(evictions, 0);
  std::printf("[ counts   ] %llu lookups: %llu hits, %llu compiles, %lld evictions, 0 overlapping builds\n",
              static_cast<unsigned long long>(hits + compiles), static_cast<unsigned long long>(hits),
              static_cast<unsigned long long>(compiles), static_cast<long long>(evictions));
}

// Starts a store writer and SIGKILLs it after a random moment of work.
void kill_a_writer_midway(const fs::path& cache, std::mt19937_64& random) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::string seed = std::to_string(random());
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(ready[1], 1);
    ::execl(STRESS_WORKER, STRESS_WORKER, "store", cache.c_str(), "150000", seed.c_str(), nullptr);
    _exit(127);
  }
  ::close(ready[1]);
  char line[8];
  (void)!::read(ready[0], line, sizeof line);  // "ready": the store is open, writing begins
  ::close(ready[0]);
  // The random point of death: anywhere in the next few dozen store operations.
  std::this_thread::sleep_for(std::chrono::microseconds(random() % 6000));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the writer ended on its own: " << status;
}

void age_everything_in(const fs::path& dir, std::int64_t by_ns) {
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error); it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (!it->is_regular_file()) continue;
    fileops::FileInfo info;
    ASSERT_FALSE(fileops::stat_nofollow(it->path(), &info));
    ASSERT_FALSE(fileops::set_mtime(it->path(), info.mtime_ns - by_ns));
  }
}

// A hit's lookup goes to the background writer (its trace) after the app got the program: the
// adapter's object it holds (an OpenCL shadow program) must not go with it. Released there last, at
// exit, PoCL's removal of the program's scratch folder raced the exit handler's and aborted.
TEST(BackgroundWriter, NeverReleasesAnAdaptersObject) {
  TempDir tmp;
  RunOptions options;
  options.env = {{"JITCACHE_DIR", (tmp / "cache").string()}, {"JITCACHE_TRACE", "1"},
                 {"JITCACHE_TRACE_DIR", (tmp / "traces").string()}};
  options.unset = {"LD_PRELOAD"};
  RunResult result = run({STRESS_WORKER, "release"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "released by the caller\n") << result.err;
}

TEST(CrashSafety, WritersKilledAtRandomPointsLeaveNothingBadThatAReaderTrusts) {
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  const char* configured = std::getenv("JITCACHE_CRASH_ITERATIONS");  // bench/ runs more
  const int iterations = configured ? std::atoi(configured) : 200;
  std::mt19937_64 random(20261123);
  for (int i = 0; i < iterations; ++i) {
    kill_a_writer_midway(cache, random);
    if (::testing::Test::HasFatalFailure()) return;
  }

  auto store = open_store(cache, 150000);
  std::uint64_t trusted = 0;
  expect_every_trusted_entry_is_intact(*store, &trusted);
  EXPECT_GT(trusted, 0u);
  // Nothing committed is damaged: a kill leaves at most uncommitted leftovers (temp files, a
  // binary without its sidecar, a lock file), and those are not reported until they are stale.
  EXPECT_TRUE(store->verify(false).empty()) << describe(store->verify(false));
  SizeInfo recorded = store->size(), counted = count_files(cache);
  EXPECT_EQ(recorded.bytes, counted.bytes);
  EXPECT_EQ(recorded.entries, counted.entries);

  // An hour later the sweep reclaims every leftover of the killed writers.
  age_everything_in(cache, 2 * 3600 * 1000000000ll);
  std::vector<VerifyProblem> swept = store->verify(true);
  for (const auto& problem : swept) EXPECT_NE(problem.problem.find("(removed)"), std::string::npos) << problem.problem;
  std::size_t leftovers = 0;
  for (const auto& file : fs::recursive_directory_iterator(cache)) {
    if (!file.is_regular_file()) continue;
    const fs::path path = file.path();
    const bool in_shard = path.parent_path().parent_path().parent_path() == cache;
    // Format 2 writes neither: a pair there is a leftover.
    const bool old_format = in_shard && (path.extension() == ".bin" || path.extension() == ".json");
    if (old_format || path.parent_path() == cache / "tmp" || path.parent_path() == cache / "locks") {
      ++leftovers;
      ADD_FAILURE() << "not reclaimed: " << path;
    }
  }
  EXPECT_EQ(leftovers, 0u);
  recorded = store->size();
  counted = count_files(cache);
  EXPECT_EQ(recorded.bytes, counted.bytes);
  EXPECT_EQ(recorded.entries, counted.entries);
  std::printf("[ counts   ] %d writers killed; %llu intact entries trusted; %zu leftovers swept\n", iterations,
              static_cast<unsigned long long>(trusted), swept.size());
}

}  // namespace
}  // namespace jitcache::testing

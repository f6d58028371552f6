// Scale benchmark of the disk store through its own API (no driver involved).
//
//   store_scale fill DIR COUNT [BINARY_BYTES]   saves COUNT synthetic entries, then times
//                                               random lookups, size() and list()
//   store_scale autopass DIR [PASS_ENTRIES]     saves that cross max_size: the bounded automatic
//                                               pass each runs (store/local/pass_scope.hpp), median and
//                                               slowest of five
//   store_scale evict DIR                       one eviction pass down to half the store
//
// Prints CSV rows "metric,value,unit" on stdout, for bench/scale.sh.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "store/local/disk_store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

jitcache::Digest128 key_of(std::uint64_t index) {
  return jitcache::xxh3_128("store_scale entry " + std::to_string(index));
}

std::unique_ptr<jitcache::DiskStore> open_store(const char* dir) {
  jitcache::StoreLimits limits;
  limits.max_size = ~0ull >> 1;  // no eviction while filling; the evict phase asks for it
  std::string error;
  auto store = jitcache::DiskStore::open(dir, limits, &error);
  if (!store) {
    std::fprintf(stderr, "store_scale: %s\n", error.c_str());
    std::exit(1);
  }
  return store;
}

// This thread's CPU time: what a pass costs apart from waiting for the disk and for other processes.
double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

void row(const char* metric, double value, const char* unit) { std::printf("%s,%.3f,%s\n", metric, value, unit); }

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

int fill(const char* dir, std::uint64_t count, std::size_t binary_bytes) {
  auto store = open_store(dir);
  std::string binary(binary_bytes, '\0');
  auto start = Clock::now();
  for (std::uint64_t i = 0; i < count; ++i) {
    // Distinct contents so that every checksum differs, as real binaries would.
    std::snprintf(binary.data(), binary.size(), "binary %llu", static_cast<unsigned long long>(i));
    nlohmann::json sidecar = {{"schema", 1}, {"api", "opencl"}, {"kind", "source"}, {"device", "synthetic"},
                              {"compile_time_us", 100000}, {"kernel_names", {"k"}}};
    jitcache::SaveResult saved = store->save(key_of(i), binary, std::move(sidecar));
    if (saved.status != jitcache::SaveStatus::stored) {
      std::fprintf(stderr, "store_scale: save %llu: %s\n", static_cast<unsigned long long>(i), saved.reason.c_str());
      return 1;
    }
  }
  double fill_s = seconds_since(start);
  row("entries", static_cast<double>(count), "count");
  row("store_throughput", static_cast<double>(count) / fill_s, "entries/s");

  std::mt19937_64 random(42);
  std::vector<double> lookup_us;
  const int lookups = 20000;
  for (int i = 0; i < lookups; ++i) {
    jitcache::Digest128 key = key_of(random() % count);
    auto begin = Clock::now();
    jitcache::LoadResult loaded = store->load(key);
    lookup_us.push_back(seconds_since(begin) * 1e6);
    if (loaded.status != jitcache::LoadStatus::hit) {
      std::fprintf(stderr, "store_scale: lookup %d did not hit\n", i);
      return 1;
    }
  }
  row("lookup_p50", percentile(lookup_us, 0.50), "us");
  row("lookup_p99", percentile(lookup_us, 0.99), "us");

  auto sizing = Clock::now();
  jitcache::SizeInfo size = store->size();
  row("size_call", seconds_since(sizing) * 1e6, "us");
  // Every sidecar read: minutes at a million entries, and no target; BENCH_SKIP_FULL_LIST=1 skips it.
  std::size_t listed = count;
  if (std::getenv("BENCH_SKIP_FULL_LIST") == nullptr) {
    auto listing = Clock::now();
    listed = store->list().size();
    row("list_call", seconds_since(listing) * 1e3, "ms");
  }
  // Through the per-shard index: the first call writes it, the second reads it.
  for (const char* metric : {"list_index_build", "list_index"}) {
    auto indexed = Clock::now();
    if (store->list_summaries().size() != count) {
      std::fprintf(stderr, "store_scale: the index listing is not complete\n");
      return 1;
    }
    row(metric, seconds_since(indexed) * 1e3, "ms");
  }
  if (listed != count || size.entries != count) {
    std::fprintf(stderr, "store_scale: size says %llu entries, list %zu, expected %llu\n",
                 static_cast<unsigned long long>(size.entries), listed, static_cast<unsigned long long>(count));
    return 1;
  }
  return 0;
}

// Five saves, each into a store whose max_size is its size just before: each runs one bounded
// automatic pass, as the first save over the limit of an app run does.
int autopass(const char* dir, std::uint64_t pass_entries) {
  std::vector<double> pass_ms, cpu_ms, evicted;
  for (std::uint64_t i = 0; i < 5; ++i) {
    jitcache::StoreLimits limits;
    limits.max_size = open_store(dir)->size().bytes;  // the next save crosses it
    if (pass_entries > 0) limits.pass_entries = pass_entries;
    std::string error;
    auto store = jitcache::DiskStore::open(dir, limits, &error);
    if (!store) return 1;
    std::string binary(4096, 'x');
    const double cpu_start = thread_cpu_ms();
    auto start = Clock::now();
    // A key no earlier run saved: replacing an entry would not cross the limit.
    const auto key = jitcache::xxh3_128("autopass " + std::to_string(Clock::now().time_since_epoch().count()));
    jitcache::SaveResult saved = store->save(key, binary, {{"schema", 1}, {"api", "opencl"}});
    pass_ms.push_back(seconds_since(start) * 1e3);
    cpu_ms.push_back(thread_cpu_ms() - cpu_start);
    evicted.push_back(static_cast<double>(saved.evicted_entries));
    if (saved.status != jitcache::SaveStatus::stored) return 1;
  }
  row("auto_pass", percentile(pass_ms, 0.5), "ms");
  row("auto_pass_max", percentile(pass_ms, 1.0), "ms");
  row("auto_pass_cpu", percentile(cpu_ms, 0.5), "ms");
  row("auto_pass_evicted", percentile(evicted, 0.5), "count");
  return 0;
}

int evict(const char* dir) {
  auto store = open_store(dir);
  jitcache::SizeInfo before = store->size();
  auto start = Clock::now();
  jitcache::EvictionReport report = store->evict(before.bytes / 2, 0);
  row("eviction_pass", seconds_since(start), "s");
  row("evicted_entries", static_cast<double>(report.removed_entries), "count");
  return report.removed_entries > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string phase = argc > 2 ? argv[1] : "";
  if (phase == "fill" && argc >= 4) {
    std::size_t bytes = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 4096;
    return fill(argv[2], std::strtoull(argv[3], nullptr, 10), std::max<std::size_t>(bytes, 32));
  }
  if (phase == "evict") return evict(argv[2]);
  if (phase == "autopass") return autopass(argv[2], argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0);
  std::fprintf(stderr, "usage: store_scale fill DIR COUNT [BINARY_BYTES] | autopass DIR [PASS_ENTRIES] | evict DIR\n");
  return 2;
}

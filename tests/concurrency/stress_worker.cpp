// A test helper process for the concurrency tests. Two modes:
//
//   stress_worker engine KEYS ROUNDS THREADS COMPILE_US SEED
//     Drives the real Engine (configured by JITCACHE_* variables, as under the shim) like an
//     adapter would: for ROUNDS x KEYS lookups in a random order per thread, a hit is checked
//     against the payload it must be; a miss "compiles" (real CPU work for COMPILE_US) and is
//     built(). Prints one line per compile "compile <key> <start_ns> <end_ns>" (CLOCK_MONOTONIC)
//     and a final "summary hits=<n> mismatches=<n> compiles=<n>".
//
//   stress_worker release
//     Serves one key from the memory tier with an adapter object (as an OpenCL shadow program is
//     kept) while the background writer is held up, then drops the tier's reference, and prints
//     which thread released the object: "released by the caller" or "released by the writer".
//
//   stress_worker store DIR MAX_SIZE SEED
//     Saves, loads, replaces and removes entries of a DiskStore forever, as fast as it can, so
//     that the crash test can SIGKILL it at any point. Every saved binary is a payload().
#include <time.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/background_writer.hpp"
#include "core/engine.hpp"
#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"
#include "stress_payload.hpp"

namespace {

using namespace jitcache;

constexpr std::size_t kMaxPayload = 32 * 1024;

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// A compiler's cost: CPU work for about `us` microseconds, then the payload.
std::string compile(std::uint64_t key, std::uint64_t us) {
  const std::int64_t until = monotonic_ns() + static_cast<std::int64_t>(us) * 1000;
  std::uint64_t sink = key;
  while (monotonic_ns() < until) {
    for (int i = 0; i < 1000; ++i) sink = stress::mix(sink);
  }
  if (sink == 42) std::puts("");  // keeps the loop from being optimised away
  return stress::payload(key, 0, stress::payload_size(key, 0, kMaxPayload));
}

TargetIdentity stress_target() {
  TargetIdentity target;
  target.device.fields = {{"name", "stress device"}, {"vendor_id", "0"}};
  target.compiler.versions = {{"driver_version", "stress 1"}};
  return target;
}

int run_engine(std::uint64_t keys, int rounds, int threads, std::uint64_t compile_us, std::uint64_t seed) {
  Engine* engine = Engine::instance();
  if (!engine) {
    std::fprintf(stderr, "stress_worker: no engine (cache disabled or unusable)\n");
    return 2;
  }
  const TargetIdentity target = stress_target();
  std::atomic<std::uint64_t> hits{0}, mismatches{0}, compiles{0};
  std::mutex output;

  auto work = [&](std::uint64_t thread_seed) {
    std::mt19937_64 random(thread_seed);
    for (int round = 0; round < rounds; ++round) {
      std::vector<std::uint64_t> order(keys);
      for (std::uint64_t k = 0; k < keys; ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), random);
      for (std::uint64_t key : order) {
        ProgramInputs inputs;
        inputs.input = "__kernel void k" + std::to_string(key) + "() {}";
        PreparedProgram prepared = engine->prepare(inputs);
        Lookup lookup = engine->lookup(prepared, target, "stress device");
        if (lookup.hit()) {
          std::optional<stress::PayloadId> id = stress::check_payload(lookup.binary);
          if (!id || id->key != key) ++mismatches;
          ++hits;
          engine->loaded(lookup, 0);
          continue;
        }
        const std::int64_t start = monotonic_ns();
        std::string binary = compile(key, compile_us);
        const std::int64_t end = monotonic_ns();
        ++compiles;
        {
          std::lock_guard lock(output);
          std::printf("compile %" PRIu64 " %" PRId64 " %" PRId64 "\n", key, start, end);
        }
        engine->deliver(lookup, BuildOutcome::read({std::move(binary), {"k"}, "", compile_us, nullptr}));
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(work, seed * 7919 + static_cast<std::uint64_t>(t));
  for (auto& worker : workers) worker.join();
  engine->flush();
  std::printf("summary hits=%" PRIu64 " mismatches=%" PRIu64 " compiles=%" PRIu64 "\n", hits.load(),
              mismatches.load(), compiles.load());
  return 0;
}

// An adapter releases its objects on its own threads: released on the writer's, at exit, a PoCL
// program's release raced the removal of its scratch folder (shim/opencl/driver_quirks.cpp).
int run_release() {
  Engine* engine = Engine::instance();
  if (!engine) return 2;
  const TargetIdentity target = stress_target();
  ProgramInputs inputs;
  inputs.input = "__kernel void kept() {}";
  PreparedProgram prepared = engine->prepare(inputs);
  LookupContext context;
  context.memory_scope = 1;
  Lookup built = engine->lookup(prepared, target, "stress device", context);
  if (built.hit()) return 2;
  engine->deliver(built, BuildOutcome::read({stress::payload(1, 0, 64), {"kept"}, "", 1000, nullptr}));
  engine->flush();
  Lookup from_disk = engine->lookup(prepared, target, "stress device", context);
  if (!from_disk.hit()) return 2;
  static std::atomic<std::thread::id> released_by{};
  MemoryValue value;
  value.object = std::shared_ptr<void>(new int(0), [](void* object) {
    released_by = std::this_thread::get_id();
    delete static_cast<int*>(object);
  });
  value.binary = std::make_shared<const std::string>(from_disk.binary);
  value.bytes = from_disk.binary.size();
  engine->remember(from_disk, std::move(value));
  engine->loaded(from_disk, 0);
  Lookup from_memory = engine->lookup(prepared, target, "stress device", context);
  if (!from_memory.memory.object) return 2;
  std::promise<void> go;
  BackgroundWriter::instance().post([ready = go.get_future().share()] { ready.wait(); });  // the writer lags
  engine->loaded(from_memory, 0);
  engine->forget_scope(context.memory_scope);  // the app let go of the context: the last reference here
  const bool by_caller = released_by.load() == std::this_thread::get_id();
  go.set_value();
  engine->flush();
  std::printf("released by the %s\n", by_caller ? "caller" : "writer");
  return 0;
}

Digest128 store_key(std::uint64_t n) { return Digest128{stress::mix(n), n}; }

[[noreturn]] void run_store(const char* dir, std::uint64_t max_size, std::uint64_t seed) {
  StoreLimits limits;
  limits.max_size = max_size;
  std::string error;
  std::unique_ptr<DiskStore> store = DiskStore::open(dir, limits, &error);
  if (!store) {
    std::fprintf(stderr, "stress_worker: %s\n", error.c_str());
    std::exit(2);
  }
  std::mt19937_64 random(seed);
  constexpr std::uint64_t kKeys = 48;
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) {
    const std::uint64_t n = random() % kKeys;
    const Digest128 key = store_key(n);
    switch (random() % 8) {
      case 0:
        (void)store->remove(key);
        break;
      case 1:
        (void)store->load(key);
        break;
      default: {  // save, often replacing an entry with a new version
        KeyLock lock;
        (void)store->lock_key(key, std::chrono::milliseconds(0), &lock);
        const std::uint64_t version = random() % 4;
        std::string binary = stress::payload(n, version, stress::payload_size(n, version, kMaxPayload));
        (void)store->save(key, binary, {{"n", n}, {"version", version}});
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "engine" && argc == 7) {
    return run_engine(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3]), std::atoi(argv[4]),
                      std::strtoull(argv[5], nullptr, 10), std::strtoull(argv[6], nullptr, 10));
  }
  if (mode == "release" && argc == 2) return run_release();
  if (mode == "store" && argc == 5) run_store(argv[2], std::strtoull(argv[3], nullptr, 10), std::strtoull(argv[4], nullptr, 10));
  std::fprintf(stderr, "usage: stress_worker engine KEYS ROUNDS THREADS COMPILE_US SEED | release | store DIR MAX_SIZE SEED\n");
  return 2;
}

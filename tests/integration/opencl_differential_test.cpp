// The standing check of issue 15: between builds, a seeded random walk edits headers (two include
// folders, a nested header, a __has_include probe), build options, defines, the include style and
// driver flags in the environment; after every step the app's output under jitcache must equal
// its output without jitcache on real PoCL. Bounded: a fixed number of steps (about 20 s).
// JITCACHE_DIFF_SEED picks another walk; JITCACHE_DIFF_STEPS a longer one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <sstream>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

unsigned env_number(const char* name, unsigned fallback) {
  const char* value = std::getenv(name);
  return value && *value ? static_cast<unsigned>(std::strtoul(value, nullptr, 10)) : fallback;
}

struct World {
  // What the walk changes; the files are rewritten from it before every step.
  int v[2] = {1, 2};  // cfg.h in dir0 / dir1
  int w[2] = {10, 20};  // inner.h in dir0 / dir1
  int dir = 0;           // which folder is searched
  bool dir_from_env = false;  // -I in POCL_EXTRA_BUILD_FLAGS instead of the options
  int offset = -1;       // -DOFFSET=..., -1: none
  int extra = -1;        // -DEXTRA=... in POCL_EXTRA_BUILD_FLAGS, -1: none
  bool feature = false;  // dir/feat.h exists
  bool computed = false;  // #include CFG instead of #include "cfg.h"

  std::string describe() const {
    std::ostringstream text;
    text << "v=" << v[0] << "," << v[1] << " w=" << w[0] << "," << w[1] << " dir=" << dir << " env_dir=" << dir_from_env
         << " offset=" << offset << " extra=" << extra << " feature=" << feature << " computed=" << computed;
    return text.str();
  }
};

class Differential : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  fs::path kernel = tmp / "kernel.cl";
  fs::path dirs[2] = {tmp / "dir0", tmp / "dir1"};
  int runs = 0;

  void write_world(const World& world) {
    for (int d = 0; d < 2; ++d) {
      fs::create_directories(dirs[d]);
      write_text(dirs[d] / "cfg.h", "#define V " + std::to_string(world.v[d]) + "\n#include \"inner.h\"\n");
      write_text(dirs[d] / "inner.h", "#define W " + std::to_string(world.w[d]) + "\n");
      const bool feature = world.feature && d == world.dir;
      if (feature) write_text(dirs[d] / "feat.h", "\n");
      else fs::remove(dirs[d] / "feat.h");
    }
    write_text(kernel, std::string(world.computed ? "#define CFG \"cfg.h\"\n#include CFG\n" : "#include \"cfg.h\"\n") +
                           "#if __has_include(\"feat.h\")\n#define FEAT 3\n#else\n#define FEAT 0\n#endif\n"
                           "#ifndef OFFSET\n#define OFFSET 0\n#endif\n#ifndef EXTRA\n#define EXTRA 0\n#endif\n"
                           "__kernel void compute(__global int* out) {\n"
                           "  int i = get_global_id(0); out[i] = V * i + W + OFFSET + FEAT + EXTRA;\n}\n");
  }

  std::vector<std::string> argv(const World& world) {
    std::string options;
    if (!world.dir_from_env) options += "-I " + dirs[world.dir].string();
    if (world.offset >= 0) options += " -DOFFSET=" + std::to_string(world.offset);
    return {KERNEL_FILE_APP, kernel.string(), options};
  }

  RunOptions environment(const World& world) {
    RunOptions options;
    options.env["POCL_KERNEL_CACHE"] = "0";
    std::string flags;
    if (world.dir_from_env) flags += "-I" + dirs[world.dir].string();
    if (world.extra >= 0) flags += " -DEXTRA=" + std::to_string(world.extra);
    if (!flags.empty()) options.env["POCL_EXTRA_BUILD_FLAGS"] = flags;
    else options.unset.push_back("POCL_EXTRA_BUILD_FLAGS");
    return options;
  }
};

TEST_F(Differential, RandomEditsNeverMakeTheCachedOutputDiffer) {
  // The default walk reaches hits, misses and uncacheable builds in 10 steps, and the library
  // before issue 15's fixes served a wrong binary at its step 4.
  const unsigned seed = env_number("JITCACHE_DIFF_SEED", 20261260);
  const unsigned steps = env_number("JITCACHE_DIFF_STEPS", 10);
  std::mt19937 random(seed);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  World world;
  std::map<std::string, int> verdicts;
  for (unsigned step = 0; step < steps; ++step) {
    // One change per step, weighted toward what a key can miss: header edits (mostly in the
    // folder in use), include-search changes, the __has_include probe and the include style.
    switch (pick(12)) {
      case 0: case 1: world.v[pick(3) == 0 ? 1 - world.dir : world.dir] = pick(9) + 1; break;
      case 2: case 3: world.w[pick(3) == 0 ? 1 - world.dir : world.dir] = pick(90) + 10; break;
      case 4: world.offset = pick(3) - 1; break;
      case 5: world.dir = 1 - world.dir; break;
      case 6: case 7: world.dir_from_env = !world.dir_from_env; break;
      case 8: world.extra = pick(3) - 1; break;
      case 9: case 10: world.feature = !world.feature; break;
      default: world.computed = !world.computed; break;
    }
    write_world(world);
    RunOptions plain_env = environment(world);
    plain_env.unset.push_back("LD_PRELOAD");
    const RunResult plain = run(argv(world), plain_env);
    ASSERT_EQ(plain.exit_code, 0) << plain.err;

    RunOptions cached_env = environment(world);
    const fs::path traces = tmp / ("traces-" + std::to_string(++runs));
    cached_env.env["LD_PRELOAD"] = JITCACHE_LIBRARY;
    cached_env.env["JITCACHE_DIR"] = cache.string();
    cached_env.env["JITCACHE_TRACE"] = "1";
    cached_env.env["JITCACHE_TRACE_DIR"] = traces.string();
    const CachedRun cached = run_traced(argv(world), cached_env, traces);
    ASSERT_EQ(cached.result.exit_code, 0) << cached.result.err;
    ASSERT_EQ(cached.result.out, plain.out) << "seed " << seed << ", step " << step << ": " << world.describe();
    for (const auto& [verdict, count] : cached.verdicts) verdicts[verdict] += count;
  }
  // The walk exercised the cache both ways (a walk that never hits checks nothing).
  EXPECT_GT(verdicts["hit"], 0);
  EXPECT_GT(verdicts["miss"], 0);
  std::printf("seed %u, %u steps: %d hits, %d misses, %d uncacheable\n", seed, steps, verdicts["hit"], verdicts["miss"],
              verdicts["uncacheable"]);
}

}  // namespace
}  // namespace jitcache::testing

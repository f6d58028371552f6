#include <gtest/gtest.h>

#include "tools/lib/format.hpp"
#include "tools/lib/injection.hpp"

#include <unistd.h>

#include <fstream>

namespace jitcache::tool {
namespace {

TEST(ToolFormat, SizesUseBinaryUnits) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size(5ull << 20), "5.0 MiB");
  EXPECT_EQ(format_size(1ull << 30), "1.0 GiB");
}

TEST(ToolFormat, DurationsUseMillisecondsThenSeconds) {
  EXPECT_EQ(format_duration_us(400), "0.4 ms");
  EXPECT_EQ(format_duration_us(812000), "812 ms");
  EXPECT_EQ(format_duration_us(12300000), "12.3 s");
  EXPECT_EQ(format_duration_us(600000000), "10 min");
}

TEST(ToolFormat, TableAlignsColumns) {
  Table table({"NAME", "SIZE"}, {1});
  table.add({"a", "1 B"});
  table.add({"longer", "10.0 KiB"});
  EXPECT_EQ(table.render(), "NAME        SIZE\na            1 B\nlonger  10.0 KiB\n");
}

TEST(ToolInjection, PreloadIsAppendedOnceAndKeepsWhatWasThere) {
  const std::filesystem::path lib = "/opt/jitcache/lib/libjitcache.so";
  EXPECT_EQ(plan_injection(lib, nullptr).env.at(0).second, lib.string());
  EXPECT_EQ(plan_injection(lib, "/usr/lib/libother.so").env.at(0).second, "/usr/lib/libother.so:" + lib.string());
  const std::string both = "/usr/lib/libother.so:" + lib.string();
  EXPECT_EQ(plan_injection(lib, both.c_str()).env.at(0).second, both);
  EXPECT_EQ(plan_injection(lib, "").env.at(0).first, "LD_PRELOAD");
}

TEST(ToolInjection, LibraryIsLookedForNextToTheToolThenInTheBuildTreeThenLibdir) {
  auto candidates = library_candidates("/prefix/bin");
  ASSERT_GE(candidates.size(), 3u);
  EXPECT_EQ(candidates[0], "/prefix/bin/libjitcache.so");
  EXPECT_EQ(candidates[1].lexically_normal(), "/prefix/shim/libjitcache.so");
  EXPECT_EQ(candidates[2].parent_path().filename(), "jitcache");  // <libdir>/jitcache: a private dir
  EXPECT_EQ(candidates[2].parent_path().parent_path().parent_path().lexically_normal().string().substr(0, 7), "/prefix");
}

}  // namespace
}  // namespace jitcache::tool

namespace jitcache::tool {
namespace {

TEST(ToolInjection, LayersAreAddedOnlyWhenTheLoaderSupportsThem) {
  const std::filesystem::path lib = "/opt/jitcache/lib/libjitcache.so";
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::filesystem::path with = dir / ("loader-with-layers-" + std::to_string(::getpid()));
  const std::filesystem::path without = dir / ("loader-without-layers-" + std::to_string(::getpid()));
  std::ofstream(with) << "...OPENCL_LAYERS...";
  std::ofstream(without) << "...nothing...";

  InjectionPlan layered = plan_injection(lib, nullptr, "/other/layer.so", with);
  ASSERT_EQ(layered.env.size(), 2u);
  EXPECT_EQ(layered.env[0], std::make_pair(std::string("LD_PRELOAD"), lib.string()));  // Level Zero
  EXPECT_EQ(layered.env[1], std::make_pair(std::string("OPENCL_LAYERS"), lib.string() + ":/other/layer.so"));

  InjectionPlan preload_only = plan_injection(lib, nullptr, nullptr, without);
  ASSERT_EQ(preload_only.env.size(), 1u);
  EXPECT_EQ(preload_only.env[0].first, "LD_PRELOAD");
  std::filesystem::remove(with);
  std::filesystem::remove(without);
}

}  // namespace
}  // namespace jitcache::tool

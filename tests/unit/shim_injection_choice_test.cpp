// Layer or preload: the rule `jitcache run` applies, against the real ICD loader installed here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

#include <fstream>

#include "shim/linux/injection_choice.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

fs::path write_file(const std::string& name, const std::string& contents) {
  fs::path path = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

TEST(InjectionChoice, InstalledOclIcdLoaderSupportsLayers) {
  std::optional<fs::path> loader = find_opencl_loader();
  ASSERT_TRUE(loader.has_value());
  EXPECT_TRUE(loader_supports_layers(*loader)) << *loader;  // Debian 12: ocl-icd 2.3.1
  InjectionPlan plan = plan_injection("/opt/libjitcache.so", loader, nullptr, nullptr);
  EXPECT_EQ(plan.method, Injection::icd_layer);
  EXPECT_EQ(plan.variable, "OPENCL_LAYERS");
  EXPECT_EQ(plan.value, "/opt/libjitcache.so");
}

TEST(InjectionChoice, ExistingLayersAndPreloadsAreKept) {
  fs::path with_layers = write_file("loader-with-layers", std::string("\x7f" "ELF...OPENCL_LAYERS\0...", 24));
  EXPECT_EQ(plan_injection("/j.so", with_layers, "/other.so", nullptr).value, "/j.so:/other.so");
  fs::path old_loader = write_file("loader-without-layers", "\x7f" "ELF...OCL_ICD_VENDORS...");
  InjectionPlan plan = plan_injection("/j.so", old_loader, "/other.so", "/pre.so");
  EXPECT_EQ(plan.method, Injection::preload);
  EXPECT_EQ(plan.variable, "LD_PRELOAD");
  EXPECT_EQ(plan.value, "/j.so:/pre.so");
  fs::remove(with_layers);
  fs::remove(old_loader);
}

TEST(InjectionChoice, NoLoaderOrUnreadableLoaderMeansPreload) {
  EXPECT_EQ(plan_injection("/j.so", std::nullopt, nullptr, nullptr).method, Injection::preload);
  EXPECT_EQ(plan_injection("/j.so", fs::path("/nonexistent/libOpenCL.so.1"), nullptr, nullptr).method,
            Injection::preload);
}

}  // namespace
}  // namespace jitcache

// The explain comparison over real key records (derive_key), one changed input at a time: each
// must be named by the right component, in words a user can act on.
#include <gtest/gtest.h>

#include "hashing/key.hpp"
#include "tools/lib/explain.hpp"

namespace jitcache::tool {
namespace {

using nlohmann::json;

ProgramInputs program() {
  ProgramInputs p;
  p.input = "#include \"common.h\"\n__kernel void scale(__global float* x) { x[0] *= SCALE; }\n";
  p.options = "-I /src/kernels -cl-fast-relaxed-math -DN=4";
  p.headers = {{"common.h", "/src/kernels/common.h", true, xxh3_128("#define SCALE 3.0f\n")}};
  p.spec_constants = {{3, std::string("\x04\x00\x00\x00", 4)}};
  return p;
}

TargetIdentity target() {
  TargetIdentity t;
  t.compiler.libraries = {{"/usr/lib/x86_64-linux-gnu/libpocl.so.2.10.0", "ab12cd34ef56", 1000, 111}};
  t.compiler.versions = {{"platform_version", "OpenCL 3.0 PoCL 3.1"}, {"driver_version", "3.1"}};
  t.device.fields = {{"vendor_id", "4098"}, {"name", "cpu-haswell"}, {"device_version", "OpenCL 3.0 PoCL"}};
  return t;
}

json components(const ProgramInputs& p, const TargetIdentity& t) { return derive_key(p, t).to_json()["components"]; }

std::vector<Difference> diff(const ProgramInputs& now, const TargetIdentity& now_target) {
  return compare_components(components(now, now_target), components(program(), target()));
}

TEST(ExplainCompare, IdenticalInputsHaveNoDifference) { EXPECT_TRUE(diff(program(), target()).empty()); }

TEST(ExplainCompare, ChangedDefineIsNamedAsBuildOptions) {
  ProgramInputs now = program();
  now.options = "-I /src/kernels -cl-fast-relaxed-math -DN=8";
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "options");
  EXPECT_EQ(d[0].now, "-I /src/kernels -cl-fast-relaxed-math -DN=8");
  EXPECT_NE(d[0].description.find("-DN=8 instead of -DN=4"), std::string::npos) << d[0].description;
  EXPECT_EQ(summarize(d), d[0].description);
}

TEST(ExplainCompare, WhitespaceOnlyOptionChangeIsNoDifference) {
  ProgramInputs now = program();
  now.options = "  -I /src/kernels   -cl-fast-relaxed-math -DN=4 ";
  EXPECT_TRUE(diff(now, target()).empty());
}

TEST(ExplainCompare, EditedHeaderIsNamedWithBothDigests) {
  ProgramInputs now = program();
  now.headers[0].digest = xxh3_128("#define SCALE 5.0f\n");
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "headers");
  EXPECT_EQ(d[0].subject, "common.h");
  EXPECT_NE(d[0].description.find("header common.h changed (digest " + now.headers[0].digest.hex().substr(0, 12)),
            std::string::npos)
      << d[0].description;
  EXPECT_NE(d[0].description.find(program().headers[0].digest.hex().substr(0, 12)), std::string::npos);
}

TEST(ExplainCompare, MissingAndNewHeadersAreSaidSo) {
  ProgramInputs now = program();
  now.headers[0].found = false;
  now.headers[0].path.clear();
  now.headers.push_back({"extra.h", "/src/kernels/extra.h", true, xxh3_128("x")});
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_NE(d[0].description.find("header common.h is missing now"), std::string::npos) << d[0].description;
  EXPECT_NE(d[1].description.find("header extra.h is included now"), std::string::npos) << d[1].description;
}

TEST(ExplainCompare, SpecConstantValueIsShownAsBytesAndInteger) {
  ProgramInputs now = program();
  now.spec_constants = {{3, std::string("\x08\x00\x00\x00", 4)}, {5, std::string("\x01", 1)}};
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].component, "spec_constants");
  EXPECT_EQ(d[0].description, "spec constant 3 = 0x08000000 (8) vs 0x04000000 (4)");
  EXPECT_EQ(d[1].description, "spec constant 5 = 0x01 (1) vs not set (module default)");
}

TEST(ExplainCompare, EnvironmentVariableSetNowButNotThen) {
  ProgramInputs now = program();
  now.environment = {{"POCL_WORK_GROUP_METHOD", "cbs"}};
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "environment");
  EXPECT_EQ(d[0].description, "env POCL_WORK_GROUP_METHOD=cbs vs unset");
  // And the other way round.
  auto reverse = compare_components(components(program(), target()), components(now, target()));
  ASSERT_EQ(reverse.size(), 1u);
  EXPECT_EQ(reverse[0].description, "env POCL_WORK_GROUP_METHOD unset vs POCL_WORK_GROUP_METHOD=cbs");
}

TEST(ExplainCompare, CompilerLibraryBuildIdChangeIsNamed) {
  TargetIdentity now = target();
  now.compiler.libraries[0] = {"/usr/lib/x86_64-linux-gnu/libpocl.so.2.11.0", "99887766", 1200, 333};
  auto d = diff(program(), now);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "compiler");
  EXPECT_NE(d[0].description.find("compiler library libpocl.so.2.11.0 build-id changed"), std::string::npos)
      << d[0].description;
}

TEST(ExplainCompare, LibraryWithoutBuildIdIsComparedBySizeAndTime) {
  TargetIdentity before = target(), now = target();
  before.compiler.libraries[0].build_id.clear();
  now.compiler.libraries[0].build_id.clear();
  now.compiler.libraries[0].size = 2000;
  auto d = compare_components(components(program(), now), components(program(), before));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].description.find("size 2000 vs 1000 bytes"), std::string::npos) << d[0].description;
}

TEST(ExplainCompare, DriverAndDeviceVersionsAreNamed) {
  TargetIdentity now = target();
  now.compiler.versions[1].second = "3.2";
  now.device.fields[2].second = "OpenCL 3.0 PoCL 3.2";
  auto d = diff(program(), now);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].description, "compiler driver version '3.2' vs '3.1'");
  EXPECT_EQ(d[1].component, "device");
  EXPECT_EQ(d[1].description, "device device version 'OpenCL 3.0 PoCL 3.2' vs 'OpenCL 3.0 PoCL'");
}

TEST(ExplainCompare, SourceEditPointsAtTheFirstDifferentLine) {
  ProgramInputs now = program();
  now.input = "#include \"common.h\"\n__kernel void scale(__global float* x) { x[0] *= 2 * SCALE; }\n";
  auto d = diff(now, target());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "input");
  EXPECT_NE(d[0].description.find("first difference at line 2"), std::string::npos) << d[0].description;
}

TEST(ExplainCompare, DigestOnlyDifferenceIsStillReported) {
  json now = components(program(), target()), cached = now;
  cached["spec_constants"]["digest"] = "00000000000000000000000000000000";
  auto d = compare_components(now, cached);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].component, "spec_constants");
}

TEST(ExplainClosest, PrefersTheSameProgramAndSkipsOthersAndItself) {
  ProgramInputs other = program();
  other.input = "__kernel void unrelated(__global int* y) { y[0] = 1; }\n";
  ProgramInputs options_changed = program();
  options_changed.options += " -DEXTRA";
  ProgramInputs two_changes = options_changed;
  two_changes.environment = {{"POCL_WORK_GROUP_METHOD", "cbs"}};
  const json lookup = components(program(), target());
  std::vector<CachedEntry> entries = {
      {"own", {{"components", lookup}}, 5},
      {"other", {{"components", components(other, target())}, {"kernel_names", {"unrelated"}}}, 4},
      {"two", {{"components", components(two_changes, target())}}, 3},
      {"one", {{"components", components(options_changed, target())}}, 2},
  };
  auto matches = closest_entries(lookup, {"scale"}, entries, "own", 5);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].entry->key, "one");
  EXPECT_TRUE(matches[0].same_input);
  EXPECT_EQ(matches[1].entry->key, "two");
  EXPECT_EQ(matches[1].differences.size(), 2u);
  EXPECT_EQ(summarize(matches[1].differences), "2 things changed: build options, env POCL_WORK_GROUP_METHOD");
}

TEST(ExplainClosest, EditedSourceWithTheSameKernelsIsClose) {
  ProgramInputs edited = program();
  edited.input = "#include \"common.h\"\n__kernel void scale(__global float* x) { x[0] += SCALE; }\n";
  std::vector<CachedEntry> entries = {{"old", {{"components", components(program(), target())}}, 1}};
  auto matches = closest_entries(components(edited, target()), {}, entries, "", 3);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_FALSE(matches[0].same_input);
  EXPECT_TRUE(matches[0].shares_kernels);
}

TEST(ExplainClosest, NothingCloseGivesNoMatch) {
  ProgramInputs other = program();
  other.input = "__kernel void unrelated(__global int* y) { y[0] = 1; }\n";
  std::vector<CachedEntry> entries = {{"other", {{"components", components(other, target())}}, 1}};
  EXPECT_TRUE(closest_entries(components(program(), target()), {}, entries, "", 3).empty());
}

// Issue 16: a miss whose only difference is the compiler (a driver upgrade) points at `jitcache
// warm` when the entry recorded its inputs, and says why not otherwise; other misses get no hint.
TEST(ExplainSuggestion, OnlyTheCompilerChangedSuggestsWarm) {
  TargetIdentity upgraded = target();
  upgraded.compiler.libraries[0].build_id = "ffff0000";
  json cached_sidecar = {{"components", components(program(), target())}, {"inputs", "00ff"}};
  std::vector<CachedEntry> entries = {{"old", cached_sidecar, 1}};
  auto matches = closest_entries(components(program(), upgraded), {}, entries, "", 1);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_NE(suggestion(matches[0]).find("jitcache warm"), std::string::npos) << suggestion(matches[0]);

  entries[0].sidecar.erase("inputs");
  matches = closest_entries(components(program(), upgraded), {}, entries, "", 1);
  EXPECT_EQ(suggestion(matches[0]).find("jitcache warm"), std::string::npos);
  EXPECT_NE(suggestion(matches[0]).find("no recorded inputs"), std::string::npos);

  ProgramInputs edited = program();
  edited.options += " -DMORE";
  entries[0].sidecar["inputs"] = "00ff";
  matches = closest_entries(components(edited, upgraded), {}, entries, "", 1);
  EXPECT_TRUE(suggestion(matches[0]).empty());
}

TEST(ExplainText, KernelNamesAreFoundInOpenClSource) {
  EXPECT_EQ(kernel_names_in("__kernel void a(int x) {}\nkernel void b() {}\n"
                            "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void c() {}\n"
                            "void helper_kernel() {}\n"),
            (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ExplainText, LineSimilarity) {
  EXPECT_DOUBLE_EQ(line_similarity("a\nb\nc\nd\n", "a\nb\nc\nx\n"), 0.75);
  EXPECT_DOUBLE_EQ(line_similarity("a\n", "z\n"), 0.0);
}

}  // namespace
}  // namespace jitcache::tool

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "hashing/include_scan.hpp"
#include "hashing/key.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

TEST(IncludeDirsFromOptions, AllSpellings) {
  const auto dirs = include_dirs_from_options(
      "-cl-std=CL2.0 -I dir1 -Idir2 -I\"dir with space\" -I \"quoted after\" -DX=1 \"-Iwhole quoted\" "
      "-I'single q'");
  EXPECT_EQ(dirs, (std::vector<fs::path>{"dir1", "dir2", "dir with space", "quoted after", "whole quoted",
                                         "single q"}));
}

TEST(IncludeDirsFromOptions, IgnoresOtherOptionsAndDanglingFlag) {
  EXPECT_TRUE(include_dirs_from_options("").empty());
  EXPECT_TRUE(include_dirs_from_options("-DINCLUDE=1 -cl-mad-enable -Werror").empty());
  EXPECT_TRUE(include_dirs_from_options("-DX -I").empty());
  EXPECT_EQ(include_dirs_from_options("-I\t\n/abs/dir"), (std::vector<fs::path>{"/abs/dir"}));
}

class IncludeScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("jitcache_include_scan_" + std::string(info->name()) + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_);
    root_ = fs::canonical(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path write(const fs::path& relative, const std::string& contents) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

  std::vector<HeaderDependency> scan(std::string_view source, const std::vector<fs::path>& dirs = {}) {
    return scan_includes(source, dirs, root_);
  }

  static std::vector<std::string> names(const std::vector<HeaderDependency>& headers) {
    std::vector<std::string> result;
    for (const auto& header : headers) result.push_back(header.name);
    return result;
  }

  fs::path root_;
};

TEST_F(IncludeScanTest, FindsQuotedAndAngledIncludesWithDigests) {
  const fs::path a = write("a.h", "int a;\n");
  const fs::path b = write("inc/b.h", "int b;\n");
  const auto headers = scan("#include \"a.h\"\n#  include <b.h>\n__kernel void k() {}\n", {root_ / "inc"});
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].name, "a.h");
  EXPECT_EQ(headers[0].path, a.string());
  EXPECT_TRUE(headers[0].found);
  EXPECT_EQ(headers[0].digest, xxh3_128("int a;\n"));
  EXPECT_EQ(headers[1].name, "b.h");
  EXPECT_EQ(headers[1].path, b.string());
  EXPECT_EQ(headers[1].digest, xxh3_128("int b;\n"));
}

TEST_F(IncludeScanTest, IgnoresIncludesInComments) {
  write("real.h", "");
  write("line.h", "");
  write("block.h", "");
  const auto headers = scan(
      "// #include \"line.h\"\n"
      "/* #include \"block.h\"\n"
      "#include \"block.h\" */\n"
      "#include \"real.h\" // trailing comment\n"
      "const char* s = \"not // a comment\"; /* comment */ int x;\n");
  EXPECT_EQ(names(headers), (std::vector<std::string>{"real.h"}));
}

TEST_F(IncludeScanTest, FindsADirectiveSplitByBackslashNewlines) {
  write("split.h", "");
  EXPECT_EQ(names(scan("#inc\\\nlude \"split.h\"\n")), (std::vector<std::string>{"split.h"}));
  EXPECT_EQ(names(scan("#inc\\\r\nlude \"split.h\"\n")), (std::vector<std::string>{"split.h"}));
  EXPECT_EQ(names(scan("#/* a comment */include \"split.h\"\n")), (std::vector<std::string>{"split.h"}));
  EXPECT_TRUE(scan("#define INCLUDE 1\n__kernel void k(__global int* include) {}\n").empty());
}

TEST_F(IncludeScanTest, IncludeDirectoriesAreSearchedInOrder) {
  write("first/x.h", "first");
  write("second/x.h", "second");
  EXPECT_EQ(scan("#include <x.h>\n", {root_ / "first", root_ / "second"})[0].digest, xxh3_128("first"));
  EXPECT_EQ(scan("#include <x.h>\n", {root_ / "second", root_ / "first"})[0].digest, xxh3_128("second"));
}

TEST_F(IncludeScanTest, QuotedIncludeLooksNextToIncludingHeaderFirst) {
  write("lib/outer.h", "#include \"inner.h\"\n");
  const fs::path local = write("lib/inner.h", "local");
  write("other/inner.h", "from -I");
  const auto headers = scan("#include <outer.h>\n", {root_ / "lib", root_ / "other"});
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[1].path, local.string());

  // Angled includes do not look next to the including header.
  write("lib/outer2.h", "#include <inner.h>\n");
  const auto angled = scan("#include <outer2.h>\n", {root_ / "other", root_ / "lib"});
  ASSERT_EQ(angled.size(), 2u);
  EXPECT_EQ(angled[1].path, (root_ / "other/inner.h").string());
}

TEST_F(IncludeScanTest, WorkingDirectoryIsSearchedAfterIncludeDirs) {
  write("w.h", "working");
  write("dir/w.h", "dir");
  EXPECT_EQ(scan("#include <w.h>\n", {root_ / "dir"})[0].digest, xxh3_128("dir"));
  EXPECT_EQ(scan("#include <w.h>\n", {})[0].digest, xxh3_128("working"));
}

TEST_F(IncludeScanTest, RelativeIncludeDirsResolveAgainstWorkingDirectory) {
  const fs::path header = write("rel/r.h", "r");
  const auto headers = scan("#include <r.h>\n", include_dirs_from_options("-I rel"));
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_TRUE(headers[0].found);
  EXPECT_EQ(headers[0].path, header.string());
}

TEST_F(IncludeScanTest, MissingHeaderIsRecorded) {
  write("present.h", "#include \"absent_too.h\"\n");
  const auto headers = scan("#include \"absent.h\"\n#include \"present.h\"\n#include \"absent.h\"\n");
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0].name, "absent.h");
  EXPECT_FALSE(headers[0].found);
  EXPECT_TRUE(headers[0].path.empty());
  EXPECT_EQ(headers[0].digest, Digest128{});
  EXPECT_EQ(headers[1].name, "present.h");
  EXPECT_TRUE(headers[1].found);
  EXPECT_EQ(headers[2].name, "absent_too.h");
  EXPECT_FALSE(headers[2].found);
}

TEST_F(IncludeScanTest, CycleTerminatesAndEachHeaderAppearsOnce) {
  write("a.h", "#include \"b.h\"\n");
  write("b.h", "#include \"a.h\"\n#include \"b.h\"\n");
  const auto headers = scan("#include \"a.h\"\n#include \"b.h\"\n");
  EXPECT_EQ(names(headers), (std::vector<std::string>{"a.h", "b.h"}));
}

TEST_F(IncludeScanTest, SameFileReachedByTwoNamesIsScannedOnce) {
  write("dir/h.h", "h");
  const auto headers = scan("#include \"dir/h.h\"\n#include \"dir/../dir/h.h\"\n#include <h.h>\n",
                            {root_ / "dir"});
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].name, "dir/h.h");
}

TEST_F(IncludeScanTest, OrderIsFirstSeenDepthFirst) {
  write("a.h", "#include \"a1.h\"\n");
  write("a1.h", "");
  write("b.h", "");
  const std::string source = "#include \"a.h\"\n#include \"b.h\"\n";
  EXPECT_EQ(names(scan(source)), (std::vector<std::string>{"a.h", "a1.h", "b.h"}));
  EXPECT_EQ(names(scan(source)), names(scan(source)));
}

TEST_F(IncludeScanTest, DeepChainIsBounded) {
  for (int i = 0; i < 100; ++i) {
    write("h" + std::to_string(i) + ".h", "#include \"h" + std::to_string(i + 1) + ".h\"\n");
  }
  const auto headers = scan("#include \"h0.h\"\n");
  ASSERT_FALSE(headers.empty());
  EXPECT_LE(headers.size(), 66u);
  EXPECT_FALSE(headers.back().found);  // the truncation marker keeps such a key distinct
  EXPECT_EQ(headers.back().name, "<include scan truncated>");
}

TEST_F(IncludeScanTest, HeaderContentChangeChangesTheKey) {
  write("inc/config.h", "#define WIDTH 4\n#include \"nested.h\"\n");
  const fs::path nested = write("inc/nested.h", "#define DEPTH 2\n");
  ProgramInputs program;
  program.input = "#include <config.h>\n__kernel void k() {}\n";
  program.options = "-I inc";
  auto key_now = [&] {
    program.headers = scan_includes(program.input, include_dirs_from_options(program.options), root_);
    return derive_key(program, TargetIdentity{}).key;
  };
  const Digest128 before = key_now();
  EXPECT_EQ(key_now(), before);
  std::ofstream(nested, std::ios::binary | std::ios::trunc) << "#define DEPTH 3\n";
  const Digest128 after = key_now();
  EXPECT_NE(after, before);
  fs::remove(nested);
  EXPECT_NE(key_now(), after);  // now recorded as missing
}

// What the scan cannot follow exactly is reported, so the engine can refuse to cache the build.
class IncludeScanRule : public IncludeScanTest {
 protected:
  IncludeScan full(std::string_view source, const std::vector<fs::path>& dirs = {},
                   const std::vector<std::string>& forced = {}) {
    return scan_program_includes(source, dirs, forced, root_);
  }
};

TEST_F(IncludeScanRule, ComputedIncludeIsExpandedExactlyOrUnresolved) {
  write("cfg.h", "#define K 1\n");
  const IncludeScan scan = full("#define CFG \"cfg.h\"\n#include CFG\n__kernel void k() {}\n");
  EXPECT_EQ(scan.unresolved, "");
  EXPECT_EQ(names(scan.headers), (std::vector<std::string>{"cfg.h"}));
  // The same include with the #define under a condition the scan cannot evaluate.
  const IncludeScan conditional = full("#ifdef X\n#define CFG \"cfg.h\"\n#endif\n#include CFG\n");
  EXPECT_NE(conditional.unresolved.find("computed #include (#include CFG): `CFG` is defined inside #if"),
            std::string::npos)
      << conditional.unresolved;
  EXPECT_NE(full("#include CFG\n").unresolved.find("computed #include"), std::string::npos);
  EXPECT_TRUE(full("#include \"cfg.h\"\n").unresolved.empty());
}

// hashcat's layout: every kernel includes its headers through -D macros, under #ifdef.
TEST_F(IncludeScanRule, HashcatStyleIncludesAreFollowedThroughOptionMacros) {
  const fs::path lib = write("OpenCL/inc_vendor.h", "#ifndef _INC_VENDOR_H\n#define _INC_VENDOR_H\n#define IS_CPU\n#endif\n")
                           .parent_path();
  write("OpenCL/inc_types.h", "#include \"inc_vendor.h\"\n");
  const std::string options = "-D KERNEL_STATIC -D INCLUDE_PATH=" + lib.string() + " -D XM2S(x)=#x -D M2S(x)=XM2S(x) -w";
  const std::string source =
      "#define NEW_SIMD_CODE\n#ifdef KERNEL_STATIC\n#include M2S(INCLUDE_PATH/inc_vendor.h)\n"
      "#include M2S(INCLUDE_PATH/inc_types.h)\n#endif\n__kernel void k() {}\n";
  const IncludeScan scan = scan_program_includes(source, {}, {}, root_, {options});
  EXPECT_EQ(scan.unresolved, "");
  EXPECT_EQ(names(scan.headers),
            (std::vector<std::string>{(lib / "inc_vendor.h").string(), (lib / "inc_types.h").string()}));

  // A header that defines INCLUDE_PATH again: the scan cannot know which one the compiler used.
  write("OpenCL/inc_types.h", "#define INCLUDE_PATH /elsewhere\n");
  const std::string redefined = scan_program_includes(source, {}, {}, root_, {options}).unresolved;
  EXPECT_NE(redefined.find("`INCLUDE_PATH` is defined more than once"), std::string::npos) << redefined;
  // Without the options the names are not macros: unresolved, as before.
  EXPECT_NE(scan_program_includes(source, {}, {}, root_, {}).unresolved.find("computed #include"), std::string::npos);
}

TEST_F(IncludeScanRule, DigraphAndTrigraphIncludesAreFollowed) {
  write("cfg.h", "#define K 1\n");
  for (const std::string source : {"%:include \"cfg.h\"\n", "  %: include <cfg.h>\n", "?\?=include \"cfg.h\"\n"}) {
    EXPECT_TRUE(may_include(source)) << source;
    const IncludeScan scan = full(source);
    EXPECT_TRUE(scan.unresolved.empty()) << source;
    EXPECT_EQ(names(scan.headers), (std::vector<std::string>{"cfg.h"})) << source;
  }
  EXPECT_FALSE(may_include("__kernel void k(__global int* a) { a[0] = 7 % 3; }\n"));
}

TEST_F(IncludeScanRule, HasIncludeRecordsThePresenceOfTheHeader) {
  const std::string source = "#if __has_include(\"feat.h\")\n#define F 1\n#endif\n";
  EXPECT_TRUE(may_include(source));
  const IncludeScan absent = full(source);
  EXPECT_TRUE(absent.unresolved.empty());
  ASSERT_EQ(absent.headers.size(), 1u);
  EXPECT_FALSE(absent.headers[0].found);
  write("feat.h", "");
  const IncludeScan present = full(source);
  ASSERT_EQ(present.headers.size(), 1u);
  EXPECT_TRUE(present.headers[0].found);  // so creating the file changes the key
  EXPECT_NE(full("#if __has_include(FEAT)\n#endif\n").unresolved, "");
  EXPECT_NE(full("#if __has_include_next(<x.h>)\n#endif\n").unresolved, "");
}

TEST_F(IncludeScanRule, IncludeNextAndEmbedAreUnresolved) {
  EXPECT_NE(full("#include_next <x.h>\n").unresolved.find("include_next"), std::string::npos);
  EXPECT_NE(full("#embed \"x.bin\"\n").unresolved.find("embed"), std::string::npos);
}

TEST_F(IncludeScanRule, CutShortScansAreUnresolved) {
  for (int i = 0; i < 100; ++i) {
    write("h" + std::to_string(i) + ".h", "#include \"h" + std::to_string(i + 1) + ".h\"\n");
  }
  EXPECT_NE(full("#include \"h0.h\"\n").unresolved.find("deeper than 64"), std::string::npos);

  std::string wide;
  for (int i = 0; i < 4100; ++i) wide += "#include \"w" + std::to_string(i) + ".h\"\n";  // missing ones count
  EXPECT_NE(full(wide).unresolved.find("more than 4096"), std::string::npos);
}

TEST_F(IncludeScanRule, ForcedIncludesAreScannedFirst) {
  write("forced.h", "#include \"inner.h\"\n");
  write("inner.h", "");
  const IncludeScan scan = full("__kernel void k() {}\n", {}, {"forced.h"});
  EXPECT_EQ(names(scan.headers), (std::vector<std::string>{"forced.h", "inner.h"}));
}

TEST(IncludeOptions, IncludeFilesAndUnmodelledSearchOptions) {
  const IncludeOptions parsed = include_options("-I a -include pre.h -Ib -DX=1 -cl-fast-relaxed-math");
  EXPECT_EQ(parsed.dirs, (std::vector<fs::path>{"a", "b"}));
  EXPECT_EQ(parsed.forced_includes, (std::vector<std::string>{"pre.h"}));
  EXPECT_TRUE(parsed.not_understood.empty());
  for (const char* options : {"-isystem /x", "-iquote q", "-imacros m.h", "--include-directory=/d", "-idirafter d",
                              "-includepre.h", "-I\"unclosed"}) {
    EXPECT_FALSE(include_options(options).not_understood.empty()) << options;
  }
}

}  // namespace
}  // namespace jitcache

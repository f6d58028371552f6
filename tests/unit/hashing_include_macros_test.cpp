// The macro expander for computed #include operands: the spellings real apps use resolve to the
// header the compiler opens, and everything whose meaning the scan cannot know stays unresolved.
#include <gtest/gtest.h>

#include "hashing/include_macros.hpp"
#include "hashing/predefined_macro_names.hpp"

namespace jitcache {
namespace {

// hashcat 6.2.6 on PoCL, as its clBuildProgram options really are (POCL_DEBUG=llvm).
constexpr const char* kHashcatOptions =
    "-D KERNEL_STATIC -D INCLUDE_PATH=/usr/share/hashcat/OpenCL -D XM2S(x)=#x -D M2S(x)=XM2S(x) "
    "-D LOCAL_MEM_TYPE=2 -D VENDOR_ID=64 -D VECT_SIZE=16 -D DEVICE_TYPE=2 -w";

std::string resolved(IncludeMacros& macros, std::string_view operand, std::size_t file = 0, std::size_t line = 100) {
  const ComputedInclude include = macros.expand(operand, file, line);
  EXPECT_EQ(include.unresolved, "") << operand;
  return include.name;
}

// The reason `operand` stays unresolved (empty when it resolved, which the caller then reports).
std::string why(IncludeMacros& macros, std::string_view operand, std::size_t file = 0, std::size_t line = 100) {
  const ComputedInclude include = macros.expand(operand, file, line);
  EXPECT_EQ(include.name, "") << operand;
  return include.unresolved;
}

IncludeMacros with_options(std::string_view options) {
  IncludeMacros macros;
  macros.add_options(options);
  return macros;
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(IncludeMacros, HashcatIncludesResolveToTheirHeaders) {
  IncludeMacros macros = with_options(kHashcatOptions);
  EXPECT_EQ(resolved(macros, "M2S(INCLUDE_PATH/inc_vendor.h)"), "/usr/share/hashcat/OpenCL/inc_vendor.h");
  EXPECT_EQ(resolved(macros, "M2S(INCLUDE_PATH/inc_cipher_aes-gcm.cl)"),
            "/usr/share/hashcat/OpenCL/inc_cipher_aes-gcm.cl");
  // m07900-pure.cl: `#define COMPARE_M M2S(INCLUDE_PATH/inc_comp_multi.cl)`, then `#include COMPARE_M`.
  macros.add_define(" COMPARE_M M2S(INCLUDE_PATH/inc_comp_multi.cl)", 0, 19, false);
  EXPECT_EQ(resolved(macros, "COMPARE_M", 0, 120), "/usr/share/hashcat/OpenCL/inc_comp_multi.cl");
  EXPECT_EQ(macros.recheck(), "");
}

TEST(IncludeMacros, JoinedOptionsAndDefinesInTheSource) {
  IncludeMacros macros = with_options("-DP=dir/sub -DS(x)=#x -DXS(x)=S(x)");
  EXPECT_EQ(resolved(macros, "XS(P/a.h)"), "dir/sub/a.h");
  EXPECT_EQ(resolved(macros, "XS( P/a.h )"), "dir/sub/a.h");  // spaces at the ends are dropped
  macros.add_define("CFG \"cfg.h\"", 3, 1, false);
  EXPECT_EQ(resolved(macros, "CFG", 3, 2), "cfg.h");
  macros.add_define("CALL() XS(P/b.h)", 3, 2, false);
  EXPECT_EQ(resolved(macros, "CALL ( )", 3, 5), "dir/sub/b.h");
}

TEST(IncludeMacros, StringificationDoesNotExpandItsOperandAndRescanningStopsAtItself) {
  IncludeMacros macros = with_options("-DP=/p -D S(x)=#x -D XS(x)=S(x) -D a=a/b -D F(x)=F(x)");
  EXPECT_EQ(resolved(macros, "S(P/x.h)"), "P/x.h");
  EXPECT_EQ(resolved(macros, "XS(a/x.h)"), "a/b/x.h");   // `a` is not expanded again inside itself
  EXPECT_EQ(resolved(macros, "XS(F(1))"), "F(1)");       // nor is F
  EXPECT_EQ(resolved(macros, "XS(1.5e+3x.h)"), "1.5e+3x.h");  // one pp-number, never a macro
}

TEST(IncludeMacros, DefinitionsTheScanCannotOrderStayUnresolved) {
  IncludeMacros twice = with_options("-DP=/a -DP=/b -D S(x)=#x -D XS(x)=S(x)");
  EXPECT_HAS(why(twice, "XS(P/x.h)"), "`P` is defined more than once");

  IncludeMacros undone = with_options("-DP=/a -UP -D S(x)=#x -D XS(x)=S(x)");
  EXPECT_HAS(why(undone, "XS(P/x.h)"), "`P` is #undef'd");

  IncludeMacros conditional;
  conditional.add_define("CFG \"a.h\"", 0, 1, true);
  EXPECT_HAS(why(conditional, "CFG", 0, 5), "inside #if");

  IncludeMacros elsewhere;
  elsewhere.add_define("CFG \"a.h\"", 1, 1, false);
  EXPECT_HAS(why(elsewhere, "CFG", 0, 5), "another file");
  EXPECT_HAS(why(elsewhere, "CFG", 1, 1), "after the #include");  // the same line: not before it

  IncludeMacros source_twice = with_options("-DCFG=\\\"a.h\\\"");
  source_twice.add_define("CFG \"b.h\"", 0, 1, false);
  EXPECT_HAS(why(source_twice, "CFG", 0, 5), "more than once");

  IncludeMacros quoted = with_options("-DCFG=\"a.h\"");  // drivers split quotes differently
  EXPECT_HAS(why(quoted, "CFG"), "quote or backslash");
}

TEST(IncludeMacros, LaterDefinitionsAndUndefsAreCaughtByTheRecheck) {
  IncludeMacros redefined = with_options("-DP=/a -D S(x)=#x -D XS(x)=S(x)");
  EXPECT_EQ(resolved(redefined, "XS(P/x.h)"), "/a/x.h");
  redefined.add_define("P /b", 4, 1, false);  // a header scanned after the #include
  EXPECT_HAS(redefined.recheck(), "`P` is defined more than once");

  IncludeMacros undone = with_options("-DP=/a -D S(x)=#x -D XS(x)=S(x)");
  EXPECT_EQ(resolved(undone, "XS(P/x.h)"), "/a/x.h");
  undone.add_undef(" P");
  EXPECT_HAS(undone.recheck(), "`P` is #undef'd");

  IncludeMacros late = with_options("-D S(x)=#x -D XS(x)=S(x)");
  EXPECT_EQ(resolved(late, "XS(dir/x.h)"), "dir/x.h");  // `dir` and `x`, `h` looked up: no macros
  late.add_define("dir other", 0, 200, false);
  EXPECT_HAS(late.recheck(), "`dir` is defined after a computed #include looked it up");
}

TEST(IncludeMacros, NamesTheCompilerMayPredefineStayUnresolved) {
  IncludeMacros macros = with_options("-D S(x)=#x -D XS(x)=S(x) -D __MY_PATH=/a -D cl_dir=/b");
  EXPECT_HAS(why(macros, "XS(__OPENCL_VERSION__/x.h)"), "`__OPENCL_VERSION__` may be a macro the compiler predefines");
  EXPECT_HAS(why(macros, "XS(sub/inline/x.h)"), "`inline`");  // PoCL passes -Dinline=
  EXPECT_HAS(why(macros, "XS(__MY_PATH/x.h)"), "`__MY_PATH`");  // reserved, even when -D'd
  EXPECT_HAS(why(macros, "XS(cl_dir/x.h)"), "`cl_dir`");
  EXPECT_HAS(why(macros, "XS(__FILE__)"), "`__FILE__`");
  EXPECT_TRUE(compiler_may_predefine("convert_int4_sat"));
  EXPECT_TRUE(compiler_may_predefine("M_PI_F"));
  EXPECT_FALSE(compiler_may_predefine("inc_vendor"));
  EXPECT_FALSE(compiler_may_predefine("OpenCL"));
}

TEST(IncludeMacros, ConstructsOutsideTheSubsetStayUnresolved) {
  IncludeMacros macros = with_options(
      "-D S(x)=#x -D XS(x)=S(x) -D CAT(a,b)=a##b -D V(...)=#__VA_ARGS__ -D E= -D P=/p -D H=<x.h> "
      "-D LIT=\"x.h\" -D TWO(a,b)=#a");
  EXPECT_HAS(why(macros, "CAT(a,b)"), "## token pasting");
  EXPECT_HAS(why(macros, "V(x.h)"), "variadic");
  EXPECT_HAS(why(macros, "XS(E/x.h)"), "`E` expands to nothing");
  EXPECT_HAS(why(macros, "XS(P /x.h)"), "whitespace inside a stringified argument");
  EXPECT_HAS(why(macros, "P"), "does not expand to one \"string literal\"");
  EXPECT_HAS(why(macros, "H"), "does not expand to one");  // <x.h> spelled by macros
  EXPECT_HAS(why(macros, "XS(P/x.h"), "without a closing parenthesis");
  EXPECT_HAS(why(macros, "TWO(a)"), "wrong number of arguments");
  EXPECT_HAS(why(macros, "XS(a$b.h)"), "the character '$'");
  EXPECT_HAS(why(macros, "UNDEFINED_NAME"), "does not expand to one");
  EXPECT_HAS(why(macros, "S(\"x.h\")"), "a literal inside a stringified argument");
}

TEST(IncludeMacros, RunawayExpansionsEndWithAReason) {
  // Each level doubles the tokens: 2^20 if nothing stopped it.
  std::string options = "-D S(x)=#x -D XS(x)=S(x) -D L0=a";
  for (int i = 1; i <= 20; ++i) {
    options += " -D L" + std::to_string(i) + "=L" + std::to_string(i - 1) + "/L" + std::to_string(i - 1);
  }
  IncludeMacros macros = with_options(options);
  EXPECT_HAS(why(macros, "XS(L20)"), "4096 tokens");
}

}  // namespace
}  // namespace jitcache

#include "hashing/predefined_macro_names.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>

namespace jitcache {
namespace {

// Prefixes of the non-reserved macros that `clang-15 -E -dM -x cl -cl-std=CL3.0` defines with
// PoCL 3.1's options and its _kernel.h (1341 names: convert_*, as_*, vload*, CLK_*, M_*, FLT_*...),
// plus the OpenCL C spec's extension namespaces (cl_<vendor>_*, CL_*) and PoCL's own.
constexpr std::string_view kPrefixes[] = {
    "convert_", "as_",    "vload",   "vstore", "CLK_",   "atomic_", "atom_",  "M_",    "cl_",   "cles_",
    "CL_",      "native_", "half_",  "HALF_",  "FLT_",   "DBL_",    "get_",   "write_", "read_", "fast_",
    "IMG_",     "CHAR_",  "SCHAR_",  "UCHAR_", "SHRT_",  "USHRT_",  "INT_",   "UINT_", "LONG_", "ULONG_",
    "LLVM_",    "CLANG_", "HUGE_",   "FP_",    "ATOMIC_", "POCL_",  "memory_", "work_group_"};

// The rest of that list (single names, mostly builtins PoCL renames through function-like
// macros), and GNU's traditional unreserved system names, which clang defines in GNU modes.
constexpr std::string_view kNames[] = {
    "INFINITY", "INTTYPE", "MAXFLOAT", "MAX_WORK_DIM", "NAN", "NULL", "abs", "abs_diff", "acos", "acosh",
    "acospi", "add_sat", "all", "any", "asin", "asinh", "asinpi", "async_work_group_copy",
    "async_work_group_strided_copy", "atan", "atan2", "atan2pi", "atanh", "atanpi", "bitselect", "cbrt", "ceil",
    "clamp", "clz", "copysign", "cos", "cosh", "cospi", "cross", "ctz", "degrees", "distance", "dot", "erf",
    "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract",
    "frexp", "hadd", "hypot", "ilogb", "inline", "isequal", "isfinite", "isgreater", "isgreaterequal", "isinf",
    "isless", "islessequal", "islessgreater", "isnan", "isnormal", "isnotequal", "isordered", "isunordered",
    "kernel_exec", "ldexp", "length", "lgamma", "lgamma_r", "log", "log10", "log1p", "log2", "logb", "mad",
    "mad24", "mad_hi", "mad_sat", "max", "maxmag", "mem_fence", "min", "minmag", "mix", "modf", "mul24",
    "mul_hi", "nan", "nextafter", "normalize", "popcount", "pow", "pown", "powr", "prefetch", "radians",
    "remainder", "remquo", "rhadd", "rint", "rootn", "rotate", "round", "rsqrt", "select", "shuffle",
    "shuffle2", "sign", "signbit", "sin", "sincos", "sinh", "sinpi", "smoothstep", "sqrt", "step", "sub_sat",
    "tan", "tanh", "tanpi", "tgamma", "trunc", "upsample", "wait_group_events", "linux", "unix", "i386",
    "defined", "CHAR_BIT"};

}  // namespace

bool compiler_may_predefine(std::string_view name) {
  // Reserved to the implementation: __anything, _Uppercase (__FILE__, __OPENCL_VERSION__, ...).
  if (name.size() >= 2 && name[0] == '_' && (name[1] == '_' || std::isupper(static_cast<unsigned char>(name[1])))) {
    return true;
  }
  const auto has_prefix = [name](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), has_prefix) ||
         std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace jitcache

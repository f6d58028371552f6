// The SPIR-V reader: widths and defaults of every scalar specialization constant type (from a
// module clang-14 + llvm-spirv-14 compiled, tests/data/spirv), and malformed modules rejected with
// a message instead of a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hashing/spirv_module.hpp"

namespace jitcache {
namespace {

// `path` is relative to the source tree.
std::vector<std::uint8_t> read_fixture(const std::string& path) {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/" + path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Assembles a little-endian module: header, then instructions as (opcode, operand words).
class Assembler {
 public:
  explicit Assembler(std::uint32_t id_bound = 100) : words_{0x07230203, 0x00010400, 0, id_bound, 0} {}

  Assembler& op(std::uint16_t opcode, std::vector<std::uint32_t> operands) {
    words_.push_back(static_cast<std::uint32_t>(operands.size() + 1) << 16 | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
    return *this;
  }
  Assembler& raw(std::uint32_t word) {
    words_.push_back(word);
    return *this;
  }
  std::vector<std::uint32_t>& words() { return words_; }

  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> out(words_.size() * 4);
    std::memcpy(out.data(), words_.data(), out.size());
    return out;
  }

 private:
  std::vector<std::uint32_t> words_;
};

constexpr std::uint16_t kOpEntryPoint = 15, kOpTypeBool = 20, kOpTypeInt = 21, kOpTypeFloat = 22;
constexpr std::uint16_t kOpSpecConstantTrue = 48, kOpSpecConstant = 50, kOpDecorate = 71;
constexpr std::uint32_t kSpecId = 1;

// "ab" as a NUL-terminated, word-padded SPIR-V literal string.
constexpr std::uint32_t kNameAb = 'a' | 'b' << 8;

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  SpirvReadResult result = read_spirv_module(bytes);
  EXPECT_FALSE(result.info.has_value());
  return result.error;
}

TEST(SpirvModule, ReadsTheWidthOfEveryScalarSpecConstantType) {
  SpirvReadResult result = read_spirv_module(read_fixture("tests/data/spirv/spec_constant_widths.spv"));
  ASSERT_TRUE(result.info) << result.error;
  struct Expected {
    std::uint32_t id, size;
    bool is_bool;
    std::uint64_t default_bits;
  };
  const Expected expected[] = {
      {1, 1, true, 1},                       // bool true
      {2, 1, false, 0xfd},                   // char -3
      {3, 2, false, 0xfed4},                 // short -300
      {4, 4, false, 70000},                  // int
      {5, 8, false, 5000000000ull},          // long
      {6, 2, false, 0x3e00},                 // half 1.5
      {7, 4, false, 0x40200000},             // float 2.5
      {8, 8, false, 0x400a000000000000ull},  // double 3.25
  };
  ASSERT_EQ(result.info->spec_constants.size(), std::size(expected));
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    const SpirvSpecConstant& constant = result.info->spec_constants[i];
    SCOPED_TRACE("SpecId " + std::to_string(expected[i].id));
    EXPECT_EQ(constant.spec_id, expected[i].id);
    EXPECT_EQ(constant.size_bytes, expected[i].size);
    EXPECT_EQ(constant.is_bool, expected[i].is_bool);
    EXPECT_EQ(constant.default_bits, expected[i].default_bits);
  }
  EXPECT_EQ(result.info->kernel_names, (std::vector<std::string>{"widths", "second_entry"}));
  EXPECT_EQ(result.info->version_major, 1u);
  ASSERT_NE(find_spec_constant(*result.info, 5), nullptr);
  EXPECT_EQ(find_spec_constant(*result.info, 5)->size_bytes, 8u);
  EXPECT_EQ(find_spec_constant(*result.info, 9), nullptr);
}

TEST(SpirvModule, ReadsTheExampleModule) {
  SpirvReadResult result = read_spirv_module(read_fixture("examples/level_zero/kernels/vector_ops.spv"));
  ASSERT_TRUE(result.info) << result.error;
  EXPECT_EQ(result.info->kernel_names, (std::vector<std::string>{"scale_ints", "add_offset", "dot_partial"}));
  ASSERT_EQ(result.info->spec_constants.size(), 2u);  // SpecId 1 is declared twice, with one type
  EXPECT_EQ(result.info->spec_constants[0].size_bytes, 4u);
  EXPECT_TRUE(result.info->spec_constants[1].is_bool);
}

TEST(SpirvModule, SharedSpecIdMustKeepOneType) {
  Assembler same;
  same.op(kOpTypeInt, {2, 32, 0}).op(kOpSpecConstant, {2, 3, 7}).op(kOpSpecConstant, {2, 4, 9});
  same.op(kOpDecorate, {3, kSpecId, 5}).op(kOpDecorate, {4, kSpecId, 5});
  SpirvReadResult merged = read_spirv_module(same.bytes());
  ASSERT_TRUE(merged.info) << merged.error;
  ASSERT_EQ(merged.info->spec_constants.size(), 1u);
  EXPECT_EQ(merged.info->spec_constants[0].default_bits, 7u);

  Assembler mixed;
  mixed.op(kOpTypeInt, {2, 32, 0}).op(kOpTypeInt, {6, 64, 0});
  mixed.op(kOpSpecConstant, {2, 3, 7}).op(kOpSpecConstant, {6, 4, 9, 0});
  mixed.op(kOpDecorate, {3, kSpecId, 5}).op(kOpDecorate, {4, kSpecId, 5});
  EXPECT_NE(error_of(mixed.bytes()).find("two different types"), std::string::npos);
}

TEST(SpirvModule, RejectsBadHeaders) {
  EXPECT_NE(error_of({}).find("shorter than a SPIR-V header"), std::string::npos);
  EXPECT_NE(error_of({1, 2, 3}).find("multiple of 4"), std::string::npos);
  Assembler bad_magic;
  bad_magic.words()[0] = 0x12345678;
  EXPECT_NE(error_of(bad_magic.bytes()).find("bad magic"), std::string::npos);
  Assembler big_endian;
  big_endian.words()[0] = 0x03022307;
  EXPECT_NE(error_of(big_endian.bytes()).find("big-endian"), std::string::npos);
  Assembler zero_bound(0);
  EXPECT_NE(error_of(zero_bound.bytes()).find("id bound"), std::string::npos);
  Assembler bad_version;
  bad_version.words()[1] = 0x01010401;
  EXPECT_NE(error_of(bad_version.bytes()).find("version"), std::string::npos);
}

TEST(SpirvModule, RejectsMalformedInstructions) {
  Assembler zero_count;
  zero_count.raw(0x00000000 | kOpTypeInt);
  EXPECT_NE(error_of(zero_count.bytes()).find("word count of 0"), std::string::npos);

  Assembler overrun;
  overrun.raw(10u << 16 | kOpTypeInt).raw(2);
  EXPECT_NE(error_of(overrun.bytes()).find("past the end"), std::string::npos);

  Assembler unterminated;
  unterminated.op(kOpEntryPoint, {6, 2, 'a' | 'b' << 8 | 'c' << 16 | 'd' << 24});
  EXPECT_NE(error_of(unterminated.bytes()).find("NUL"), std::string::npos);

  Assembler id_out_of_bound(10);
  id_out_of_bound.op(kOpTypeBool, {42});
  EXPECT_NE(error_of(id_out_of_bound.bytes()).find("OpTypeBool"), std::string::npos);

  Assembler short_spec;
  short_spec.op(kOpSpecConstant, {2});
  EXPECT_NE(error_of(short_spec.bytes()).find("OpSpecConstant"), std::string::npos);

  Assembler twice;
  twice.op(kOpTypeInt, {2, 32, 0}).op(kOpSpecConstant, {2, 3, 7});
  twice.op(kOpDecorate, {3, kSpecId, 5}).op(kOpDecorate, {3, kSpecId, 6});
  EXPECT_NE(error_of(twice.bytes()).find("two SpecId"), std::string::npos);
}

TEST(SpirvModule, RejectsSpecIdsThatCannotBeSized) {
  Assembler not_a_constant;
  not_a_constant.op(kOpTypeInt, {2, 32, 0}).op(kOpDecorate, {2, kSpecId, 1});
  EXPECT_NE(error_of(not_a_constant.bytes()).find("not a scalar specialization constant"), std::string::npos);

  Assembler odd_width;
  odd_width.op(kOpTypeInt, {2, 24, 0}).op(kOpSpecConstant, {2, 3, 7}).op(kOpDecorate, {3, kSpecId, 1});
  EXPECT_NE(error_of(odd_width.bytes()).find("unsupported width 24"), std::string::npos);

  Assembler missing_word;
  missing_word.op(kOpTypeFloat, {2, 64}).op(kOpSpecConstant, {2, 3, 7}).op(kOpDecorate, {3, kSpecId, 1});
  EXPECT_NE(error_of(missing_word.bytes()).find("expected 2"), std::string::npos);

  Assembler no_type;
  no_type.op(kOpSpecConstant, {9, 3, 7}).op(kOpDecorate, {3, kSpecId, 1});
  EXPECT_NE(error_of(no_type.bytes()).find("not a scalar"), std::string::npos);

  Assembler bool_as_number;
  bool_as_number.op(kOpTypeInt, {2, 32, 0}).op(kOpSpecConstantTrue, {2, 3}).op(kOpDecorate, {3, kSpecId, 1});
  EXPECT_NE(error_of(bool_as_number.bytes()).find("boolean and numeric"), std::string::npos);
}

TEST(SpirvModule, KernelNamesComeFromKernelEntryPointsOnly) {
  Assembler module;
  module.op(kOpEntryPoint, {6, 2, kNameAb}).op(kOpEntryPoint, {0, 3, kNameAb});  // Kernel, Vertex
  SpirvReadResult result = read_spirv_module(module.bytes());
  ASSERT_TRUE(result.info) << result.error;
  EXPECT_EQ(result.info->kernel_names, std::vector<std::string>{"ab"});
}

// Every prefix and every one-byte change of a real module is read without crashing (ASan and the
// fuzz target catch what a plain run cannot); a cut inside the instruction stream is an error.
TEST(SpirvModule, SurvivesEveryTruncationAndByteFlipOfARealModule) {
  const std::vector<std::uint8_t> module = read_fixture("tests/data/spirv/spec_constant_widths.spv");
  for (std::size_t size = 0; size < module.size(); ++size) {
    std::vector<std::uint8_t> prefix(module.begin(), module.begin() + static_cast<std::ptrdiff_t>(size));
    SpirvReadResult result = read_spirv_module(prefix);
    if (size % 4 != 0 || size < 20) {
      EXPECT_FALSE(result.info) << size;
    }
  }
  for (std::size_t at = 0; at < module.size(); ++at) {
    for (std::uint8_t flip : {0x01, 0x80, 0xff}) {
      std::vector<std::uint8_t> changed = module;
      changed[at] ^= flip;
      SpirvReadResult result = read_spirv_module(changed);
      EXPECT_NE(result.info.has_value(), !result.error.empty()) << at;
    }
  }
}

}  // namespace
}  // namespace jitcache

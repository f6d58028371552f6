// How a zeModuleCreate descriptor becomes ProgramInputs: constants read with their declared
// widths, and everything the cache cannot key made uncacheable with a reason.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "shim/level_zero/module_inputs.hpp"

namespace jitcache::level_zero {
namespace {

// SpecId 1: int (4 bytes), SpecId 2: bool (1 byte).
std::vector<std::uint8_t> example_spirv() {
  std::ifstream in(std::string(JITCACHE_SOURCE_DIR) + "/examples/level_zero/kernels/vector_ops.spv", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ModuleInputsTest : public ::testing::Test {
 protected:
  std::vector<std::uint8_t> spirv = example_spirv();
  ze_module_desc_t desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, spirv.size(),
                           spirv.data(), " -ze-opt-level=2 ", nullptr};
};

TEST_F(ModuleInputsTest, DescribesTheModule) {
  ModuleInputs inputs = module_inputs(desc);
  EXPECT_EQ(inputs.uncacheable, "");
  EXPECT_EQ(inputs.program.api, Api::level_zero);
  EXPECT_EQ(inputs.program.kind, ProgramKind::il);
  EXPECT_EQ(inputs.program.input, std::string(spirv.begin(), spirv.end()));
  EXPECT_EQ(inputs.program.options, " -ze-opt-level=2 ");  // normalized by the key, not here
  EXPECT_TRUE(inputs.program.spec_constants.empty());
}

TEST_F(ModuleInputsTest, ReadsEachConstantWithItsDeclaredWidth) {
  // Only the declared bytes may be read: the bytes after each value would change the key.
  const std::uint64_t scale = 0xdeadbeef00000007ull;
  const std::uint8_t saturate[8] = {1, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x11};
  const std::uint32_t ids[] = {2, 1, 2};
  const void* values[] = {&saturate[1], &scale, &saturate[0]};  // id 2 twice: the last one counts
  ze_module_constants_t constants = {3, ids, values};
  desc.pConstants = &constants;
  ModuleInputs inputs = module_inputs(desc);
  ASSERT_EQ(inputs.uncacheable, "");
  ASSERT_EQ(inputs.program.spec_constants.size(), 2u);
  EXPECT_EQ(inputs.program.spec_constants[0].id, 1u);
  EXPECT_EQ(inputs.program.spec_constants[0].value, std::string("\x07\x00\x00\x00", 4));
  EXPECT_EQ(inputs.program.spec_constants[1].id, 2u);
  EXPECT_EQ(inputs.program.spec_constants[1].value, std::string("\x01", 1));
}

TEST_F(ModuleInputsTest, ConstantsThatCannotBeSizedAreUncacheable) {
  const std::int32_t value = 5;
  const std::uint32_t unknown_id[] = {9};
  const void* values[] = {&value};
  ze_module_constants_t constants = {1, unknown_id, values};
  desc.pConstants = &constants;
  EXPECT_NE(module_inputs(desc).uncacheable.find("not declared"), std::string::npos);

  const void* no_value[] = {nullptr};
  const std::uint32_t known_id[] = {1};
  constants = {1, known_id, no_value};
  EXPECT_NE(module_inputs(desc).uncacheable.find("no value"), std::string::npos);

  constants = {1, known_id, values};
  std::vector<std::uint8_t> garbage(64, 'x');
  desc.pInputModule = garbage.data();
  desc.inputSize = garbage.size();
  EXPECT_NE(module_inputs(desc).uncacheable.find("cannot size"), std::string::npos);
}

TEST_F(ModuleInputsTest, AnyExtensionIsUncacheableAndNamed) {
  ze_module_program_exp_desc_t program = {ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC, nullptr, 0, nullptr, nullptr,
                                          nullptr, nullptr};
  desc.pNext = &program;
  const std::string reason = module_inputs(desc).uncacheable;
  EXPECT_NE(reason.find("pNext stype 0x"), std::string::npos) << reason;
}

}  // namespace
}  // namespace jitcache::level_zero

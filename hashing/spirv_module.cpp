#include "hashing/spirv_module.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace jitcache {
namespace {

constexpr std::uint32_t kSpirvMagic = 0x07230203;
constexpr std::size_t kHeaderWords = 5;

// The few opcodes and enumerants the reader understands (SPIR-V specification, section 3).
constexpr std::uint16_t kOpEntryPoint = 15;
constexpr std::uint16_t kOpTypeBool = 20;
constexpr std::uint16_t kOpTypeInt = 21;
constexpr std::uint16_t kOpTypeFloat = 22;
constexpr std::uint16_t kOpSpecConstantTrue = 48;
constexpr std::uint16_t kOpSpecConstantFalse = 49;
constexpr std::uint16_t kOpSpecConstant = 50;
constexpr std::uint16_t kOpDecorate = 71;
constexpr std::uint32_t kExecutionModelKernel = 6;
constexpr std::uint32_t kDecorationSpecId = 1;

struct ScalarType {
  bool is_bool = false;
  std::uint32_t width_bits = 0;
};

struct SpecConstantDefinition {
  std::uint32_t type_id = 0;
  bool is_bool_literal = false;  // OpSpecConstantTrue / OpSpecConstantFalse
  bool bool_default = false;
  std::vector<std::uint32_t> literal_words;  // OpSpecConstant value words, low-order first
  std::size_t word_offset = 0;
};

// Everything the instruction pass collects before the cross-checks run.
struct ModuleFacts {
  std::vector<std::string> kernel_names;
  std::map<std::uint32_t, ScalarType> scalar_types;
  std::map<std::uint32_t, SpecConstantDefinition> spec_constants;  // by result id
  std::map<std::uint32_t, std::uint32_t> spec_ids;                 // result id -> SpecId
};

std::string at_word(std::size_t offset) { return " (instruction at word " + std::to_string(offset) + ")"; }

// A literal string is UTF-8, NUL-terminated and padded to whole words; the NUL must lie inside the
// instruction, or the string would run into the next one.
std::optional<std::string> literal_string(std::span<const std::uint32_t> words) {
  std::string text;
  for (std::uint32_t word : words) {
    for (int byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((word >> (8 * byte)) & 0xffu);
      if (c == '\0') return text;
      text.push_back(c);
    }
  }
  return std::nullopt;
}

std::string check_header(std::span<const std::uint32_t> words) {
  if (words[0] != kSpirvMagic) {
    if (words[0] == __builtin_bswap32(kSpirvMagic)) return "big-endian SPIR-V is not supported";
    return "not a SPIR-V module: bad magic number";
  }
  // Version word: 0 | major | minor | 0. Whether a version is supported is the driver's call.
  if ((words[1] & 0xff0000ffu) != 0) return "SPIR-V header has a malformed version word";
  if (words[3] == 0) return "SPIR-V header declares an id bound of 0";
  if (words[4] != 0) return "SPIR-V header has a non-zero reserved schema word";
  return {};
}

// Records one instruction's facts; returns an error message for a malformed instruction.
std::string note_instruction(std::uint16_t opcode, std::span<const std::uint32_t> operands,
                             std::size_t offset, std::uint32_t id_bound, ModuleFacts& facts) {
  const auto too_short = [&](std::size_t needed) { return operands.size() < needed; };
  const auto bad_id = [&](std::uint32_t id) { return id == 0 || id >= id_bound; };
  switch (opcode) {
    case kOpEntryPoint: {
      if (too_short(3)) return "OpEntryPoint is too short" + at_word(offset);
      if (operands[0] != kExecutionModelKernel) return {};
      auto name = literal_string(operands.subspan(2));
      if (!name) return "OpEntryPoint name is not NUL-terminated" + at_word(offset);
      facts.kernel_names.push_back(std::move(*name));
      return {};
    }
    case kOpTypeBool:
      if (too_short(1) || bad_id(operands[0])) return "malformed OpTypeBool" + at_word(offset);
      facts.scalar_types[operands[0]] = {true, 8};
      return {};
    case kOpTypeInt:
    case kOpTypeFloat:
      if (too_short(2) || bad_id(operands[0])) return "malformed scalar type" + at_word(offset);
      facts.scalar_types[operands[0]] = {false, operands[1]};
      return {};
    case kOpSpecConstantTrue:
    case kOpSpecConstantFalse:
    case kOpSpecConstant: {
      if (too_short(2) || bad_id(operands[1])) return "malformed OpSpecConstant" + at_word(offset);
      SpecConstantDefinition definition;
      definition.type_id = operands[0];
      definition.is_bool_literal = opcode != kOpSpecConstant;
      definition.bool_default = opcode == kOpSpecConstantTrue;
      definition.literal_words.assign(operands.begin() + 2, operands.end());
      definition.word_offset = offset;
      facts.spec_constants[operands[1]] = std::move(definition);
      return {};
    }
    case kOpDecorate:
      if (too_short(2)) return "OpDecorate is too short" + at_word(offset);
      if (operands[1] != kDecorationSpecId) return {};
      if (too_short(3) || bad_id(operands[0])) return "malformed SpecId decoration" + at_word(offset);
      if (!facts.spec_ids.emplace(operands[0], operands[2]).second) {
        return "%" + std::to_string(operands[0]) + " has two SpecId decorations" + at_word(offset);
      }
      return {};
    default:
      return {};
  }
}

// Resolves one SpecId-decorated constant into its width and default value.
std::string resolve_spec_constant(std::uint32_t result_id, std::uint32_t spec_id,
                                  const ModuleFacts& facts, SpirvSpecConstant& out) {
  const std::string subject = "SpecId " + std::to_string(spec_id);
  auto definition = facts.spec_constants.find(result_id);
  if (definition == facts.spec_constants.end()) {
    return subject + " decorates %" + std::to_string(result_id) + ", which is not a scalar specialization constant";
  }
  const SpecConstantDefinition& constant = definition->second;
  auto type = facts.scalar_types.find(constant.type_id);
  if (type == facts.scalar_types.end()) return subject + " has a result type that is not a scalar";
  if (constant.is_bool_literal != type->second.is_bool) return subject + " mixes boolean and numeric forms";

  out.spec_id = spec_id;
  if (constant.is_bool_literal) {
    out.size_bytes = 1;  // drivers read a one-byte bool from pConstantValues
    out.is_bool = true;
    out.default_bits = constant.bool_default ? 1 : 0;
    return {};
  }
  const std::uint32_t width = type->second.width_bits;
  if (width != 8 && width != 16 && width != 32 && width != 64) {
    return subject + " has unsupported width " + std::to_string(width);
  }
  const std::size_t expected_words = width == 64 ? 2 : 1;
  if (constant.literal_words.size() != expected_words) {
    return subject + " has " + std::to_string(constant.literal_words.size()) + " value words, expected " +
           std::to_string(expected_words) + at_word(constant.word_offset);
  }
  out.size_bytes = width / 8;
  std::uint64_t bits = constant.literal_words[0];
  if (expected_words == 2) bits |= static_cast<std::uint64_t>(constant.literal_words[1]) << 32;
  // Narrow literals are sign- or zero-extended into their word; keep only the value's own bytes.
  out.default_bits = width == 64 ? bits : bits & ((std::uint64_t{1} << width) - 1);
  return {};
}

}  // namespace

SpirvReadResult read_spirv_module(std::span<const std::uint8_t> bytes) {
  if (bytes.size() % 4 != 0) return {std::nullopt, "SPIR-V size is not a multiple of 4 bytes"};
  if (bytes.size() < kHeaderWords * 4) return {std::nullopt, "input is shorter than a SPIR-V header"};
  std::vector<std::uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());

  if (std::string error = check_header(words); !error.empty()) return {std::nullopt, error};
  const std::uint32_t id_bound = words[3];

  ModuleFacts facts;
  for (std::size_t offset = kHeaderWords; offset < words.size();) {
    const std::uint32_t word_count = words[offset] >> 16;
    const auto opcode = static_cast<std::uint16_t>(words[offset] & 0xffffu);
    if (word_count == 0) return {std::nullopt, "instruction with a word count of 0" + at_word(offset)};
    if (word_count > words.size() - offset) {
      return {std::nullopt, "instruction runs past the end of the module" + at_word(offset)};
    }
    const auto operands = std::span<const std::uint32_t>(words).subspan(offset + 1, word_count - 1);
    if (std::string error = note_instruction(opcode, operands, offset, id_bound, facts); !error.empty()) {
      return {std::nullopt, error};
    }
    offset += word_count;
  }

  SpirvModuleInfo info;
  info.version_major = (words[1] >> 16) & 0xffu;
  info.version_minor = (words[1] >> 8) & 0xffu;
  info.kernel_names = std::move(facts.kernel_names);
  // Several constants may share a SpecId (llvm-spirv emits one per use); one value sets them all,
  // so they must agree on its type. The first one (lowest result id) gives the default.
  std::map<std::uint32_t, SpirvSpecConstant> by_spec_id;
  for (const auto& [result_id, spec_id] : facts.spec_ids) {
    SpirvSpecConstant constant;
    if (std::string error = resolve_spec_constant(result_id, spec_id, facts, constant); !error.empty()) {
      return {std::nullopt, error};
    }
    auto [existing, inserted] = by_spec_id.emplace(spec_id, constant);
    const SpirvSpecConstant& first = existing->second;
    if (!inserted && (first.size_bytes != constant.size_bytes || first.is_bool != constant.is_bool)) {
      return {std::nullopt, "SpecId " + std::to_string(spec_id) + " is declared with two different types"};
    }
  }
  for (const auto& [spec_id, constant] : by_spec_id) info.spec_constants.push_back(constant);
  return {std::move(info), {}};
}

const SpirvSpecConstant* find_spec_constant(const SpirvModuleInfo& info, std::uint32_t spec_id) {
  for (const SpirvSpecConstant& constant : info.spec_constants) {
    if (constant.spec_id == spec_id) return &constant;
  }
  return nullptr;
}

}  // namespace jitcache

#include "shim/level_zero/module_inputs.hpp"

#include <cstdio>
#include <map>
#include <span>

#include "hashing/spirv_module.hpp"

namespace jitcache::level_zero {
namespace {

// Every extension can change the binary (ze_module_program_exp_desc_t, for one, links several
// modules), and none is understood yet: any pNext makes the module uncacheable.
std::string unknown_extension(const void* next) {
  if (!next) return {};
  char stype[16];
  std::snprintf(stype, sizeof stype, "0x%x", static_cast<unsigned>(static_cast<const ze_base_desc_t*>(next)->stype));
  return std::string("module descriptor has an extension the cache does not understand (pNext stype ") + stype + ")";
}

// The values keyed by id; a repeated id keeps its last value, as the driver applies them in order.
std::string read_spec_constants(const ze_module_desc_t& desc, ProgramInputs& program) {
  const ze_module_constants_t* constants = desc.pConstants;
  if (!constants || constants->numConstants == 0) return {};
  if (!constants->pConstantIds || !constants->pConstantValues) return "specialization constants without ids or values";
  SpirvReadResult module = read_spirv_module(std::span(desc.pInputModule, desc.inputSize));
  if (!module.info) return "cannot size specialization constants: " + module.error;
  std::map<std::uint32_t, std::string> values;
  for (std::uint32_t i = 0; i < constants->numConstants; ++i) {
    const std::uint32_t id = constants->pConstantIds[i];
    const SpirvSpecConstant* declared = find_spec_constant(*module.info, id);
    if (!declared) return "specialization constant " + std::to_string(id) + " is not declared by the module";
    const auto* value = static_cast<const char*>(constants->pConstantValues[i]);
    if (!value) return "specialization constant " + std::to_string(id) + " has no value";
    values[id] = std::string(value, declared->size_bytes);
  }
  for (auto& [id, value] : values) program.spec_constants.push_back({id, std::move(value)});
  return {};
}

}  // namespace

ModuleInputs module_inputs(const ze_module_desc_t& desc) {
  ModuleInputs inputs;
  ProgramInputs& program = inputs.program;
  program.api = Api::level_zero;
  program.kind = ProgramKind::il;
  program.input.assign(reinterpret_cast<const char*>(desc.pInputModule), desc.inputSize);
  program.options = desc.pBuildFlags ? desc.pBuildFlags : "";
  inputs.uncacheable = unknown_extension(desc.pNext);
  if (inputs.uncacheable.empty()) inputs.uncacheable = read_spec_constants(desc, program);
  return inputs;
}

}  // namespace jitcache::level_zero

// zeModuleCreate through the cache: a SPIR-V module is keyed per device; on a hit the module is
// created from the cached native binary (ZE_MODULE_FORMAT_NATIVE), otherwise the real create runs
// and zeModuleGetNativeBinary's result is stored. Any other format passes through untouched.
#include <optional>

#include "core/clock.hpp"
#include "core/engine.hpp"
#include "capture/load_back_check.hpp"
#include "core/log.hpp"
#include "core/replay_mark.hpp"
#include "shim/level_zero/hooks.hpp"
#include "shim/level_zero/load_back.hpp"
#include "shim/level_zero/module_inputs.hpp"
#include "shim/level_zero/next_functions.hpp"
#include "shim/level_zero/recorded_build_log.hpp"
#include "shim/level_zero/target_identity.hpp"

namespace jitcache::level_zero {
namespace {

struct CreateCall {
  ze_context_handle_t context;
  ze_device_handle_t device;
  const ze_module_desc_t* desc;
  ze_module_handle_t* module;
  ze_module_build_log_handle_t* build_log;
};

ze_result_t create_for_real(const CreateCall& call) {
  if (!next().zeModuleCreate) return ZE_RESULT_ERROR_UNINITIALIZED;
  return next().zeModuleCreate(call.context, call.device, call.desc, call.module, call.build_log);
}

std::string native_binary(ze_module_handle_t module) {
  std::size_t size = 0;
  if (next().zeModuleGetNativeBinary(module, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return {};
  std::string binary(size, '\0');
  if (next().zeModuleGetNativeBinary(module, &size, reinterpret_cast<std::uint8_t*>(binary.data())) !=
      ZE_RESULT_SUCCESS) {
    return {};
  }
  binary.resize(size);
  return binary;
}

std::string build_log_text(ze_module_build_log_handle_t log) {
  std::size_t size = 0;
  if (!log || next().zeModuleBuildLogGetString(log, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (next().zeModuleBuildLogGetString(log, &size, text.data()) != ZE_RESULT_SUCCESS) return {};
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// The memory tier keeps a native binary's bytes per context: the next create of the key there
// skips the disk (Level Zero modules are not shared between creates, so no object is kept).
MemoryValue memory_value(std::string binary, std::uint64_t compile_us) {
  MemoryValue value;
  value.bytes = binary.size();
  value.binary = std::make_shared<const std::string>(std::move(binary));
  value.compile_us = compile_us;
  return value;
}

// Creates the app's module from the cached binary. False: the driver refused it (entry dropped).
bool serve_from_cache(Engine& engine, Lookup& lookup, const CreateCall& call) {
  // The app's log must read as the SPIR-V compile's did: an entry without that record is rebuilt.
  // The record is decoded only when the app asked for a log handle (most apps pass none).
  std::string problem;
  std::shared_ptr<const std::string> log =
      call.build_log || !lookup.answers ? recorded_log(lookup.answers.get(), &problem) : nullptr;
  if (!log && !problem.empty()) {
    engine.rejected(lookup, problem);
    return false;
  }
  ze_module_desc_t native = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                             nullptr,
                             ZE_MODULE_FORMAT_NATIVE,
                             lookup.binary.size(),
                             reinterpret_cast<const std::uint8_t*>(lookup.binary.data()),
                             call.desc->pBuildFlags,
                             nullptr};
  Stopwatch watch;
  ze_result_t result = next().zeModuleCreate(call.context, call.device, &native, call.module, call.build_log);
  const std::uint64_t load_us = watch.elapsed_us();
  if (result != ZE_RESULT_SUCCESS) {
    // The app gets the log of the build that serves it, not of this refusal.
    if (call.build_log && *call.build_log) next().zeModuleBuildLogDestroy(*call.build_log);
    if (call.build_log) *call.build_log = nullptr;
    *call.module = nullptr;
  } else if (call.build_log && *call.build_log) {
    answer_log_handle(*call.build_log, std::move(log));
  }
  try {
    if (result == ZE_RESULT_SUCCESS && lookup.tier != Tier::memory) {
      engine.remember(lookup, memory_value(lookup.binary, lookup.sidecar.value("compile_time_us", std::uint64_t{0})));
    }
    if (result == ZE_RESULT_SUCCESS) engine.loaded(lookup, load_us);
    else engine.rejected(lookup, result_text("zeModuleCreate(ZE_MODULE_FORMAT_NATIVE)", result));
  } catch (const std::exception& e) {
    log_warning(std::string("cache bookkeeping failed: ") + e.what());
  }
  return result == ZE_RESULT_SUCCESS;
}

// After a successful create: the driver's native binary is read, checked (a replay loads it back)
// and delivered to the engine, or why it cannot be stored.
void store_built(Engine& engine, Lookup& lookup, const CreateCall& call, std::string log, std::uint64_t build_us) {
  std::string binary = native_binary(*call.module);
  if (binary.empty()) return engine.deliver(lookup, BuildOutcome::cannot_cache("driver returned no native binary"));
  std::string problem;
  nlohmann::json answers = answers_json(log, &problem);  // what a hit answers for the app's log handle
  if (answers.is_null()) return engine.deliver(lookup, BuildOutcome::cannot_cache(problem));
  std::vector<std::string> names = kernel_names(*call.module);
  BuildOutcome outcome = BuildOutcome::read({std::move(binary), std::move(names), std::move(log), build_us, std::move(answers)});
  if (replay_mark()) {  // a replay (warm, helper) proves the bytes load before every app gets them
    BuildResult& result = outcome.result;
    break_binary_for_tests(result.binary);
    outcome.unloadable = load_back(call.context, call.device, result.binary, call.desc->pBuildFlags,
                                   result.kernel_names, &result.load_check_us);
  }
  engine.deliver(lookup, std::move(outcome));
}

// The real create; the engine ends a failed one (the app gets the driver's error), a successful
// one is stored. Level Zero has no capture helper and no parking: a binary is read at once.
ze_result_t build_and_store(Engine& engine, Lookup& lookup, const CreateCall& call) {
  // A log of our own when the app asks for none, so the sidecar can keep the build's warnings.
  ze_module_build_log_handle_t own_log = nullptr;
  CreateCall real = call;
  if (!real.build_log) real.build_log = &own_log;
  Stopwatch watch;
  ze_result_t result = create_for_real(real);
  std::uint64_t build_us = watch.elapsed_us();
  try {
    const BuildEnd end{result == ZE_RESULT_SUCCESS, result_text("zeModuleCreate", result), build_us, {}};
    if (engine.finish({&lookup, 1}, end) == AfterBuild::read_now) {
      store_built(engine, lookup, call, build_log_text(*real.build_log), build_us);
    }
  } catch (const std::exception& e) {
    log_warning(std::string("module left uncached: ") + e.what());
  }
  if (own_log) next().zeModuleBuildLogDestroy(own_log);
  return result;
}

bool cacheable_call(const CreateCall& call) {
  const ze_module_desc_t* desc = call.desc;
  return call.context && call.device && call.module && desc && desc->format == ZE_MODULE_FORMAT_IL_SPIRV &&
         desc->pInputModule && desc->inputSize > 0 && next().zeModuleCreate;
}

// Keys the call and looks it up; nothing when the call goes straight to the driver.
std::optional<Lookup> look_up(Engine& engine, const CreateCall& call) {
  ModuleInputs inputs = module_inputs(*call.desc);
  const ZeTarget& target = target_of(call.device, next());
  if (inputs.uncacheable.empty()) inputs.uncacheable = target.unusable;
  if (!inputs.uncacheable.empty()) {
    engine.uncacheable(inputs.program, target.name, inputs.uncacheable);
    return std::nullopt;
  }
  LookupContext context;
  context.memory_scope = reinterpret_cast<MemoryScope>(call.context);
  return engine.lookup(engine.prepare(std::move(inputs.program)), target.identity, target.name, context);
}

}  // namespace

ze_result_t module_create(ze_context_handle_t context, ze_device_handle_t device, const ze_module_desc_t* desc,
                          ze_module_handle_t* module, ze_module_build_log_handle_t* build_log) {
  const CreateCall call{context, device, desc, module, build_log};
  Engine* engine = Engine::instance();
  if (!engine || !cacheable_call(call)) return create_for_real(call);
  std::optional<Lookup> lookup;
  try {
    lookup = look_up(*engine, call);
  } catch (const std::exception& e) {
    log_warning(std::string("module left uncached: ") + e.what());
  }
  if (!lookup) return create_for_real(call);
  if (lookup->hit() && serve_from_cache(*engine, *lookup, call)) return ZE_RESULT_SUCCESS;
  return build_and_store(*engine, *lookup, call);
}

ze_result_t context_destroy(ze_context_handle_t context) {
  if (Engine* engine = Engine::if_started()) engine->forget_scope(reinterpret_cast<MemoryScope>(context));
  return next().zeContextDestroy(context);
}

}  // namespace jitcache::level_zero

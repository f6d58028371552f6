#include "shim/level_zero/replay.hpp"

#include <vector>

#include <dlfcn.h>

#include "shim/level_zero/hooks.hpp"
#include "shim/level_zero/next_functions.hpp"
#include "shim/level_zero/target_identity.hpp"

namespace jitcache::level_zero {
namespace {

// What the hook does not forward to, from the loader this process opened.
struct LoaderExtras {
  decltype(&zeInit) init = nullptr;
  decltype(&zeContextCreate) context_create = nullptr;
  decltype(&zeContextDestroy) context_destroy = nullptr;
  decltype(&zeModuleDestroy) module_destroy = nullptr;
};

class LevelZeroReplay : public ReplayAdapter {
 public:
  std::string open() override {
    // RTLD_GLOBAL: the adapter finds the loader's functions as it finds them behind an app.
    void* loader = ::dlopen("libze_loader.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!loader) loader = ::dlopen("libze_loader.so", RTLD_NOW | RTLD_GLOBAL);
    if (!loader) return "no Level Zero loader (libze_loader.so.1) could be loaded";
    extras_.init = reinterpret_cast<decltype(&zeInit)>(::dlsym(loader, "zeInit"));
    extras_.context_create = reinterpret_cast<decltype(&zeContextCreate)>(::dlsym(loader, "zeContextCreate"));
    extras_.context_destroy = reinterpret_cast<decltype(&zeContextDestroy)>(::dlsym(loader, "zeContextDestroy"));
    extras_.module_destroy = reinterpret_cast<decltype(&zeModuleDestroy)>(::dlsym(loader, "zeModuleDestroy"));
    if (!extras_.init || !extras_.context_create || !extras_.context_destroy || !extras_.module_destroy) {
      return "the Level Zero loader lacks zeInit, zeContextCreate or zeModuleDestroy";
    }
    if (ze_result_t result = extras_.init(0); result != ZE_RESULT_SUCCESS) {
      return "no Level Zero driver here: " + result_text("zeInit", result);
    }
    return {};
  }

  std::vector<ReplayDevice> devices(std::string* why) override {
    std::vector<ReplayDevice> found;
    std::uint32_t driver_count = 0;
    if (next().zeDriverGet(&driver_count, nullptr) != ZE_RESULT_SUCCESS || driver_count == 0) {
      return *why = "no Level Zero driver", found;
    }
    std::vector<ze_driver_handle_t> drivers(driver_count);
    next().zeDriverGet(&driver_count, drivers.data());
    for (ze_driver_handle_t driver : drivers) {
      std::uint32_t count = 0;
      if (next().zeDeviceGet(driver, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) continue;
      std::vector<ze_device_handle_t> handles(count);
      next().zeDeviceGet(driver, &count, handles.data());
      for (ze_device_handle_t device : handles) {
        const ZeTarget& target = target_of(device, next());
        found.push_back({target.name, target.identity, device, driver, target.unusable});
      }
    }
    return found;
  }

  std::string build(const ReplayDevice& device, const ReplayRequest& request) override {
    const RecordedInputs& inputs = request.inputs;
    if (inputs.kind != ProgramKind::il) return "a Level Zero record that is not SPIR-V";
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t context = nullptr;
    ze_result_t result = extras_.context_create(static_cast<ze_driver_handle_t>(device.owner), &context_desc, &context);
    if (result != ZE_RESULT_SUCCESS) return result_text("zeContextCreate", result);
    std::vector<std::uint32_t> ids;
    std::vector<const void*> values;
    for (const SpecConstant& constant : inputs.spec_constants) {
      ids.push_back(constant.id);
      values.push_back(constant.value.data());
    }
    ze_module_constants_t constants = {static_cast<std::uint32_t>(ids.size()), ids.data(), values.data()};
    ze_module_desc_t desc = {ZE_STRUCTURE_TYPE_MODULE_DESC,
                             nullptr,
                             ZE_MODULE_FORMAT_IL_SPIRV,
                             inputs.input.size(),
                             reinterpret_cast<const std::uint8_t*>(inputs.input.data()),
                             inputs.options.c_str(),
                             ids.empty() ? nullptr : &constants};
    ze_module_handle_t module = nullptr;
    ze_module_build_log_handle_t log = nullptr;
    result = module_create(context, static_cast<ze_device_handle_t>(device.handle), &desc, &module, &log);
    std::string why;
    if (result != ZE_RESULT_SUCCESS) {
      why = "the driver's build failed: " + result_text("zeModuleCreate", result);
      std::size_t size = 0;
      if (log && next().zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 1) {
        std::string text(size, '\0');
        if (next().zeModuleBuildLogGetString(log, &size, text.data()) == ZE_RESULT_SUCCESS) {
          why += ": " + text.substr(0, std::min<std::size_t>(400, text.find('\0')));
        }
      }
    }
    if (log) next().zeModuleBuildLogDestroy(log);
    if (module) extras_.module_destroy(module);
    extras_.context_destroy(context);
    return why;
  }

 private:
  LoaderExtras extras_;
};

}  // namespace

std::unique_ptr<ReplayAdapter> replay_adapter() { return std::make_unique<LevelZeroReplay>(); }

}  // namespace jitcache::level_zero

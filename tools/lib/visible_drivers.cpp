#include "tools/lib/visible_drivers.hpp"

#include <dlfcn.h>

#include "shim/level_zero/target_identity.hpp"
#include "shim/opencl/target_identity.hpp"
#include "tools/lib/isolated_call.hpp"

namespace jitcache::tool {
namespace {

// The loader's exports under the names the adapter's function table uses.
opencl::NextFunctions opencl_functions(void* loader) {
  opencl::NextFunctions functions;
#define JITCACHE_RESOLVE(name) functions.name = reinterpret_cast<decltype(functions.name)>(::dlsym(loader, #name));
  JITCACHE_OPENCL_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
  return functions;
}

level_zero::NextFunctions level_zero_functions(void* loader) {
  level_zero::NextFunctions functions;
#define JITCACHE_RESOLVE(name) functions.name = reinterpret_cast<decltype(functions.name)>(::dlsym(loader, #name));
  JITCACHE_LEVEL_ZERO_FUNCTIONS(JITCACHE_RESOLVE)
#undef JITCACHE_RESOLVE
  return functions;
}

// The identity code calls these without checking: an old loader lacking one is "no driver".
bool complete(const level_zero::NextFunctions& functions) {
  bool all = true;
#define JITCACHE_CHECK(name) all = all && functions.name != nullptr;
  JITCACHE_LEVEL_ZERO_FUNCTIONS(JITCACHE_CHECK)
#undef JITCACHE_CHECK
  return all;
}

std::string platform_info(const opencl::NextFunctions& functions, cl_platform_id platform, cl_platform_info what) {
  char text[256] = {};
  functions.clGetPlatformInfo(platform, what, sizeof text - 1, text, nullptr);
  return text;
}

std::string platform_name(const opencl::NextFunctions& functions, cl_platform_id platform) {
  return platform_info(functions, platform, CL_PLATFORM_NAME);
}

std::string platform_text(const opencl::NextFunctions& functions, cl_platform_id platform) {
  return platform_name(functions, platform) + " (" + platform_info(functions, platform, CL_PLATFORM_VERSION) + ")";
}

std::vector<cl_device_id> opencl_devices(decltype(&::clGetDeviceIDs) get_devices, cl_platform_id platform) {
  cl_uint count = 0;
  if (get_devices(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
  std::vector<cl_device_id> devices(count);
  if (get_devices(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) != CL_SUCCESS) return {};
  return devices;
}

VisibleDrivers describe_opencl_drivers() {
  VisibleDrivers found;
  void* loader = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    found.problem = "no ICD loader (libOpenCL.so.1)";
    return found;
  }
  const opencl::NextFunctions functions = opencl_functions(loader);
  auto get_platforms = reinterpret_cast<decltype(&::clGetPlatformIDs)>(::dlsym(loader, "clGetPlatformIDs"));
  auto get_devices = reinterpret_cast<decltype(&::clGetDeviceIDs)>(::dlsym(loader, "clGetDeviceIDs"));
  cl_uint count = 0;
  if (!get_platforms || !get_devices || !functions.clGetPlatformInfo || !functions.clGetDeviceInfo ||
      get_platforms(0, nullptr, &count) != CL_SUCCESS || count == 0) {
    found.problem = "the ICD loader finds no platform";
    return found;
  }
  std::vector<cl_platform_id> platforms(count);
  if (get_platforms(count, platforms.data(), nullptr) != CL_SUCCESS) {
    found.problem = "the ICD loader failed to list its platforms";
    return found;
  }
  for (cl_platform_id platform : platforms) {
    const std::string text = platform_text(functions, platform);
    found.platforms.push_back(text);
    for (cl_device_id device : opencl_devices(get_devices, platform)) {
      const opencl::OpenClTarget& target = opencl::target_of(device, functions);
      found.devices.push_back({platform_name(functions, platform), target.name, target.identity, {}});
    }
  }
  return found;
}

VisibleDrivers describe_level_zero_drivers() {
  VisibleDrivers found;
  void* loader = ::dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    found.problem = "no Level Zero loader (libze_loader.so.1)";
    return found;
  }
  const level_zero::NextFunctions functions = level_zero_functions(loader);
  auto init = reinterpret_cast<decltype(&::zeInit)>(::dlsym(loader, "zeInit"));
  std::uint32_t count = 0;
  if (!init || !complete(functions) || init(0) != ZE_RESULT_SUCCESS ||
      functions.zeDriverGet(&count, nullptr) != ZE_RESULT_SUCCESS || count == 0) {
    found.problem = "the loader finds no driver";
    return found;
  }
  std::vector<ze_driver_handle_t> drivers(count);
  if (functions.zeDriverGet(&count, drivers.data()) != ZE_RESULT_SUCCESS) {
    found.problem = "the loader failed to list its drivers";
    return found;
  }
  drivers.resize(count);
  for (std::size_t index = 0; index < drivers.size(); ++index) {
    const std::string text = "driver " + std::to_string(index);
    found.platforms.push_back(text);
    std::uint32_t device_count = 0;
    if (functions.zeDeviceGet(drivers[index], &device_count, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> devices(device_count);
    if (functions.zeDeviceGet(drivers[index], &device_count, devices.data()) != ZE_RESULT_SUCCESS) continue;
    devices.resize(device_count);
    for (ze_device_handle_t device : devices) {
      const level_zero::ZeTarget& target = level_zero::target_of(device, functions);
      found.devices.push_back({text, target.name, target.identity, target.unusable});
    }
  }
  return found;
}

// ---- The answer's way back from the child: every field of VisibleDrivers. ----

nlohmann::json pairs_json(const std::vector<NameValue>& pairs) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [name, value] : pairs) list.push_back({name, value});
  return list;
}

std::vector<NameValue> pairs_from(const nlohmann::json& list) {
  std::vector<NameValue> pairs;
  for (const nlohmann::json& pair : list) pairs.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  return pairs;
}

nlohmann::json to_json(const VisibleDrivers& drivers) {
  nlohmann::json devices = nlohmann::json::array();
  for (const VisibleDevice& device : drivers.devices) {
    nlohmann::json libraries = nlohmann::json::array();
    for (const LibraryIdentity& library : device.identity.compiler.libraries) {
      libraries.push_back({library.path, library.build_id, library.size, library.mtime_ns});
    }
    devices.push_back({{"platform", device.platform},
                       {"name", device.name},
                       {"unusable", device.unusable},
                       {"libraries", std::move(libraries)},
                       {"versions", pairs_json(device.identity.compiler.versions)},
                       {"device", pairs_json(device.identity.device.fields)}});
  }
  return {{"problem", drivers.problem}, {"platforms", drivers.platforms}, {"devices", std::move(devices)}};
}

VisibleDrivers from_json(const nlohmann::json& answer) {
  VisibleDrivers drivers;
  drivers.problem = answer.at("problem").get<std::string>();
  drivers.platforms = answer.at("platforms").get<std::vector<std::string>>();
  for (const nlohmann::json& item : answer.at("devices")) {
    VisibleDevice device;
    device.platform = item.at("platform").get<std::string>();
    device.name = item.at("name").get<std::string>();
    device.unusable = item.at("unusable").get<std::string>();
    for (const nlohmann::json& library : item.at("libraries")) {
      device.identity.compiler.libraries.push_back({library.at(0).get<std::string>(), library.at(1).get<std::string>(),
                                                    library.at(2).get<std::uint64_t>(), library.at(3).get<std::int64_t>()});
    }
    device.identity.compiler.versions = pairs_from(item.at("versions"));
    device.identity.device.fields = pairs_from(item.at("device"));
    drivers.devices.push_back(std::move(device));
  }
  return drivers;
}

// A driver that crashes or hangs while being asked is reported, not fatal; and each API's
// loader is alone in its process, as in an app that uses only that API.
VisibleDrivers ask_isolated(VisibleDrivers (*describe)(), const std::string& what) {
  constexpr std::chrono::seconds kLimit{60};  // PoCL answers in well under a second
  IsolatedAnswer answer = call_isolated([describe] { return to_json(describe()); }, kLimit);
  VisibleDrivers drivers;
  if (!answer.failure.empty()) {
    drivers.problem = what + " " + answer.failure + " while listing its devices";
    return drivers;
  }
  try {
    return from_json(answer.value);
  } catch (const nlohmann::json::exception& error) {
    drivers.problem = what + " gave an unreadable answer: " + error.what();
    return drivers;
  }
}

}  // namespace

VisibleDrivers visible_opencl_drivers() { return ask_isolated(describe_opencl_drivers, "the OpenCL driver stack"); }

VisibleDrivers visible_level_zero_drivers() {
  return ask_isolated(describe_level_zero_drivers, "the Level Zero driver stack");
}

}  // namespace jitcache::tool

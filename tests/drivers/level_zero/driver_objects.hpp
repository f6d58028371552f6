// The driver's objects behind the Level Zero handles, and the tables that own them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ze_api.h>

#include "handle_table.hpp"

namespace jitcache::test_ze {

// The one driver and its one device are fixed; their handles are the addresses of two tags.
ze_driver_handle_t the_driver();
ze_device_handle_t the_device();

struct TestContext {};

struct TestModule {
  std::vector<std::uint8_t> native_binary;  // returned as-is by zeModuleGetNativeBinary
  std::vector<std::string> kernel_names;
  std::vector<const char*> kernel_name_pointers;  // into kernel_names, for zeModuleGetKernelNames
  std::atomic<std::uint32_t> live_kernels{0};     // a module may not be destroyed under its kernels
};

struct TestKernel {
  std::shared_ptr<TestModule> module;
  std::string name;
};

struct TestBuildLog {
  std::string text;
};

// Never destroyed: loaders and caches may still call in while the process exits.
HandleTable<TestContext, ze_context_handle_t>& contexts();
HandleTable<TestModule, ze_module_handle_t>& modules();
HandleTable<TestKernel, ze_kernel_handle_t>& kernels();
HandleTable<TestBuildLog, ze_module_build_log_handle_t>& build_logs();

}  // namespace jitcache::test_ze

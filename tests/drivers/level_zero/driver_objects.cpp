#include "driver_objects.hpp"

namespace jitcache::test_ze {
namespace {

char driver_tag;
char device_tag;

}  // namespace

ze_driver_handle_t the_driver() { return reinterpret_cast<ze_driver_handle_t>(&driver_tag); }
ze_device_handle_t the_device() { return reinterpret_cast<ze_device_handle_t>(&device_tag); }

HandleTable<TestContext, ze_context_handle_t>& contexts() {
  static auto* table = new HandleTable<TestContext, ze_context_handle_t>();
  return *table;
}

HandleTable<TestModule, ze_module_handle_t>& modules() {
  static auto* table = new HandleTable<TestModule, ze_module_handle_t>();
  return *table;
}

HandleTable<TestKernel, ze_kernel_handle_t>& kernels() {
  static auto* table = new HandleTable<TestKernel, ze_kernel_handle_t>();
  return *table;
}

HandleTable<TestBuildLog, ze_module_build_log_handle_t>& build_logs() {
  static auto* table = new HandleTable<TestBuildLog, ze_module_build_log_handle_t>();
  return *table;
}

}  // namespace jitcache::test_ze

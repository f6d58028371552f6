// Environment knobs that let tests steer the driver. Each is read at every use, so one test process
// can, for example, simulate a driver upgrade between two module builds.
#pragma once

#include <cstdint>

namespace jitcache::test_ze {

// JITCACHE_TEST_ZE_DRIVER_VERSION: ze_driver_properties_t::driverVersion (decimal or 0x-hex, non-zero).
std::uint32_t driver_version();

// JITCACHE_TEST_ZE_COMPILE_COST: multiplies the CPU time a SPIR-V compile burns (default 1; 0 = none).
double compile_cost_scale();

// JITCACHE_TEST_ZE_COMPILE_LOG: file that gets one line per SPIR-V compile; nullptr when unset.
const char* compile_log_path();

}  // namespace jitcache::test_ze

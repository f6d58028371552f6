// Makes a SPIR-V "compile" cost CPU time proportional to the module size, like a real JIT.
#pragma once

#include <cstdint>
#include <span>

namespace jitcache::test_ze {

// Runs rounds of dependent mixing over the bytes: about 30 ms for 10 KB at cost_scale 1 on a
// current x86-64 core (this file is always built optimized, so Debug builds cost the same).
void burn_compile_time(std::span<const std::uint8_t> bytes, double cost_scale);

}  // namespace jitcache::test_ze

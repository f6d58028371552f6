#include "compile_cost.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace jitcache::test_ze {
namespace {

constexpr double kRoundsAtScaleOne = 2500;  // tuned: 10 KB takes ~30 ms

// The result leaves through a volatile store so the optimizer cannot drop the work.
volatile std::uint64_t compile_work_sink;

std::uint64_t mix_round(std::span<const std::uint8_t> bytes, std::uint64_t state) {
  std::size_t offset = 0;
  for (; offset + 8 <= bytes.size(); offset += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + offset, 8);
    state = std::rotl(state ^ word, 27) * 0x94d049bb133111ebull;
    state ^= state >> 31;
  }
  for (; offset < bytes.size(); ++offset) state = (state ^ bytes[offset]) * 0x100000001b3ull;
  return state;
}

}  // namespace

void burn_compile_time(std::span<const std::uint8_t> bytes, double cost_scale) {
  const auto rounds = static_cast<std::uint64_t>(std::llround(kRoundsAtScaleOne * cost_scale));
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::uint64_t round = 0; round < rounds; ++round) state = mix_round(bytes, state + round);
  compile_work_sink = state;
}

}  // namespace jitcache::test_ze

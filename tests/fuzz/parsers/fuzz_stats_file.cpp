// <root>/stats.json as read_stats parses it: any bytes, never a crash; only integer counters
// come back.
#include "core/stats.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  fuzz::write_file(fuzz::scratch_dir() / "stats.json", fuzz::as_text(data, size));
  CounterMap counters = read_stats(fuzz::scratch_dir());
  volatile std::size_t seen = counters.size();
  (void)seen;
  return 0;
}

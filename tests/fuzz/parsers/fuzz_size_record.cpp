// The size ledger record (<root>/size): parse anything; whatever parses must survive a
// format -> parse round trip unchanged.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "store/local/size_ledger.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache::store_detail;
  auto record = parse_size_record(jitcache::fuzz::as_text(data, size));
  if (!record) return 0;
  auto again = parse_size_record(format_size_record(*record));
  if (!again || again->dirty != record->dirty || again->totals.bytes != record->totals.bytes ||
      again->totals.entries != record->totals.entries) {
    std::abort();
  }
  return 0;
}

// The shared parser of untrusted JSON: whatever the bytes, it never crashes, and what it accepts
// is within the depth bound and survives a dump/parse round trip (dump walks the whole tree).
#include <cstdlib>

#include "fuzz_support.hpp"
#include "hashing/bounded_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  const std::string_view text = fuzz::as_text(data, size);
  const nlohmann::json parsed = parse_untrusted_json(text, 1 << 20, 16);
  if (parsed.is_discarded()) return 0;
  const std::string again = parsed.dump();
  if (json_nesting_depth(again, 16) > 16) std::abort();
  if (parse_untrusted_json(again, 1 << 21, 16) != parsed) std::abort();
  return 0;
}

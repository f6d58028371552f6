// What a hit keeps of a sidecar (store/local/pack_sidecar.hpp) against the parser: for any text the
// parser reads as an object, the fields a hit keeps must be the parser's, and the answers' text must
// parse to the parser's answers (or the text is left to the parser: nullopt). Nothing may crash.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "hashing/bounded_json.hpp"
#include "store/local/pack_sidecar.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  const std::string_view text = fuzz::as_text(data, size);
  const std::optional<pack::HitFields> hit = pack::hit_fields(text, pack::kHitFields, pack::kAnswersTextField);
  const std::optional<pack::HitFields> disk = pack::all_but(text, "components", pack::kAnswersTextField);
  const nlohmann::json whole = parse_untrusted_json(text);
  if (!whole.is_object()) return 0;
  // The parser keeps the last of a name given twice; the scan refuses a kept name given twice, but
  // a dropped one may repeat: compare only names the text gives once.
  if (hit) {
    if (hit->fields.is_discarded()) std::abort();
    for (const auto& [name, value] : hit->fields.items()) {
      if (whole.at(name) != value) std::abort();
    }
    for (std::string_view name : pack::kHitFields) {
      if (whole.contains(name) != hit->fields.contains(name)) std::abort();
    }
    if (hit->as_text && parse_untrusted_json(*hit->as_text) != whole.at(pack::kAnswersTextField)) std::abort();
    if (!hit->as_text && whole.contains(pack::kAnswersTextField)) std::abort();
  }
  if (disk) {
    if (disk->fields.is_discarded()) std::abort();
    for (const auto& [name, value] : disk->fields.items()) {
      if (name != "components" && whole.at(name) != value) std::abort();
    }
  }
  return 0;
}

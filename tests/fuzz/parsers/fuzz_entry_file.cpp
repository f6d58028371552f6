// A store format 2 entry file as check_entry reads it from disk (store/local/entry_file.hpp), and the
// per-shard records and listing index beside it. Input: the file's bytes. A verdict of "ok" must
// mean the binary is exactly what the header's checksum covers; what the store writes must always
// pass; the shard record and the index parse or refuse without crashing, and whatever parses
// survives a format -> parse round trip.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "hashing/digest.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/entry_file.hpp"
#include "store/local/shard_index.hpp"
#include "store/local/shard_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  const std::string_view input = fuzz::as_text(data, size);

  // A store layout on the scratch folder: key 00.. so the entry lives in 00/00/.
  static const std::string key_hex(32, '0');
  const Digest128 key = *Digest128::from_hex(key_hex);
  fileops::Dir root;
  if (fileops::Dir::open(fuzz::scratch_dir(), &root)) std::abort();
  const store_detail::StoreLayout layout(fuzz::scratch_dir(), std::move(root));
  const store_detail::EntryPaths paths = store_detail::entry_paths(key_hex);
  if (layout.dir().make_dir(paths.outer_dir) || layout.dir().make_dir(paths.inner_dir)) std::abort();
  fuzz::write_file(layout.shown(paths.entry), input);

  store_detail::EntryCheck check = store_detail::check_entry(layout, paths, size % 2 == 0);
  if (check.state == store_detail::EntryCheck::State::ok) {
    std::string why;
    const auto header = store_detail::decode_entry_header(input, input.size(), &why);
    if (!header || header->key != key || xxh3_64(check.binary) != header->binary_xxh3) std::abort();
    if (input.substr(input.size() - check.binary.size()) != check.binary) std::abort();
  }
  // What the store writes for this input as a binary must always pass.
  nlohmann::json sidecar = nlohmann::json::object();
  store_detail::add_integrity_fields(&sidecar, key_hex, input);
  fuzz::write_file(layout.shown(paths.entry), store_detail::encode_entry(key, store_detail::sidecar_text(sidecar), input));
  check = store_detail::check_entry(layout, paths);
  if (check.state != store_detail::EntryCheck::State::ok || check.binary != input) std::abort();

  // The shard record and the shard index of shard 00.
  if (auto record = store_detail::parse_shard_record(0, input)) {
    auto again = store_detail::parse_shard_record(0, store_detail::format_shard_record(0, *record));
    if (!again || again->generation != record->generation || again->totals.bytes != record->totals.bytes) std::abort();
  }
  if (auto entries = store_detail::parse_shard_index(0, 7, input)) {
    auto again = store_detail::parse_shard_index(0, 7, store_detail::format_shard_index(0, 7, *entries));
    if (!again || again->size() != entries->size()) std::abort();
  }
  return 0;
}

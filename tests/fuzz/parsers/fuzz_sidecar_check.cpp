// An entry's sidecar JSON and binary as check_entry reads them from disk. Input: sidecar text,
// then (after the first NUL, if any) the binary. A verdict of "ok" must mean the binary matches
// the recorded size and checksum; nothing may crash.
#include <cstdlib>
#include <cstring>

#include "fuzz_support.hpp"
#include "hashing/digest.hpp"
#include "store/local/entry_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  std::string_view input = fuzz::as_text(data, size);
  std::size_t split = input.find('\0');
  std::string_view sidecar = input.substr(0, split);
  std::string_view binary = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);

  // A store layout on the scratch folder: key 00.. so the entry lives in 00/00/.
  static const std::string key_hex(32, '0');
  fileops::Dir root;
  if (fileops::Dir::open(fuzz::scratch_dir(), &root)) std::abort();
  const store_detail::StoreLayout layout(fuzz::scratch_dir(), std::move(root));
  const store_detail::EntryPaths paths = store_detail::entry_paths(key_hex);
  if (layout.dir().make_dir(paths.outer_dir) || layout.dir().make_dir(paths.inner_dir)) std::abort();
  fuzz::write_file(layout.shown(paths.sidecar), sidecar);
  fuzz::write_file(layout.shown(paths.binary), binary);

  store_detail::EntryCheck check = store_detail::check_entry(layout, paths);
  if (check.state == store_detail::EntryCheck::State::ok) {
    if (check.binary != binary) std::abort();
    if (check.sidecar[store_detail::kChecksumField] != hex64(xxh3_64(binary))) std::abort();
    if (check.sidecar[store_detail::kKeyField] != key_hex) std::abort();
  }
  // A sidecar the store writes for this binary must always pass.
  nlohmann::json own = check.sidecar.is_object() ? check.sidecar : nlohmann::json::object();
  store_detail::add_integrity_fields(&own, key_hex, binary);
  fuzz::write_file(layout.shown(paths.sidecar), store_detail::sidecar_text(own));
  if (store_detail::check_entry(layout, paths).state != store_detail::EntryCheck::State::ok) std::abort();
  return 0;
}

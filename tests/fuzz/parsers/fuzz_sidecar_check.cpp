// An entry's sidecar JSON and binary as check_entry reads them from disk. Input: sidecar text,
// then (after the first NUL, if any) the binary. A verdict of "ok" must mean the binary matches
// the recorded size and checksum; nothing may crash.
#include <cstdlib>
#include <cstring>

#include "fuzz_support.hpp"
#include "hashing/digest.hpp"
#include "store/entry_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitcache;
  std::string_view input = fuzz::as_text(data, size);
  std::size_t split = input.find('\0');
  std::string_view sidecar = input.substr(0, split);
  std::string_view binary = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);

  store_detail::EntryPaths paths;
  paths.inner_dir = fuzz::scratch_dir();
  paths.outer_dir = paths.inner_dir;
  paths.sidecar = paths.inner_dir / "entry.json";
  paths.binary = paths.inner_dir / "entry.bin";
  fuzz::write_file(paths.sidecar, sidecar);
  fuzz::write_file(paths.binary, binary);

  store_detail::EntryCheck check = store_detail::check_entry(paths);
  if (check.state == store_detail::EntryCheck::State::ok) {
    if (check.binary != binary) std::abort();
    if (check.sidecar[store_detail::kChecksumField] != hex64(xxh3_64(binary))) std::abort();
  }
  // A sidecar the store writes for this binary must always pass.
  nlohmann::json own = check.sidecar.is_object() ? check.sidecar : nlohmann::json::object();
  store_detail::add_integrity_fields(&own, binary);
  fuzz::write_file(paths.sidecar, store_detail::sidecar_text(own));
  if (store_detail::check_entry(paths).state != store_detail::EntryCheck::State::ok) std::abort();
  return 0;
}

// A pack file (docs/pack-format.md) as the read-only tier opens it: anything may be in it. Nothing
// may crash or allocate past the file's size, and whatever the reader serves must be what the
// index vouches for: an entry's binary has the size its record names and the checksum its record
// names (XXH3-128 packs, signed packs, full checks) and the XXH3-64 its sidecar names (where the
// index does not check it, and in full checks); an inputs
// record has the checksum its row names and the XXH3-128 it is filed under.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "store/local/entry_check.hpp"
#include "store/pack/pack_reader.hpp"

namespace {

using namespace jitcache;

void check_entry(const PackReader& pack, const pack::IndexRecord& record, bool full) {
  LoadResult loaded = pack.load_record(record, full);
  if (loaded.status != LoadStatus::hit) return;
  if (loaded.binary.size() != record.binary_size || !loaded.sidecar.is_object()) std::abort();
  const pack::ChecksumAlgorithm algorithm = pack.header().checksum_algorithm;
  const bool index_checked = full || pack.signer() || algorithm == pack::ChecksumAlgorithm::xxh3_128;
  if (index_checked && pack::checksum(algorithm, loaded.binary) != record.binary_checksum) std::abort();
  if ((!index_checked || full) &&
      loaded.sidecar.value(store_detail::kChecksumField, std::string()) != hex64(xxh3_64(loaded.binary))) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path file = fuzz::scratch_dir() / "fuzz.jcpack";
  fuzz::write_file(file, fuzz::as_text(data, size));
  std::string error;
  std::unique_ptr<PackReader> pack = PackReader::open(file, PackTrust{}, &error);
  if (!pack) {
    if (error.empty()) std::abort();  // a refusal always says why
    return 0;
  }
  if (pack->index_bytes().size() > size || !pack->manifest().is_object()) std::abort();
  // A fuzzed index may claim millions of records: the first few say everything about the checks.
  for (std::size_t i = 0; i < pack->entry_count() && i < 16; ++i) {
    const pack::IndexRecord record = pack->record(i);
    check_entry(*pack, record, false);
    check_entry(*pack, record, true);
    LoadResult looked_up = pack->load(record.key);  // the tier's lookup: binary search + the same checks
    if (looked_up.status == LoadStatus::hit && looked_up.binary.size() > size) std::abort();
  }
  for (std::size_t i = 0; i < pack->input_count() && i < 16; ++i) {
    const pack::InputIndexRecord row = pack->input_record(i);
    LoadResult loaded = pack->load_input_record(row);
    if (loaded.status != LoadStatus::hit) continue;
    const pack::Checksum checksum = pack::checksum(pack->header().checksum_algorithm, loaded.binary);
    if (xxh3_128(loaded.binary) != row.digest || checksum != row.checksum) std::abort();
  }
  (void)pack->load(xxh3_128("absent"));
  return 0;
}

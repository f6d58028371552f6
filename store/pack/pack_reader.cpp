#include "store/pack/pack_reader.hpp"

#include <algorithm>

#include "hashing/bounded_json.hpp"
#include "hashing/recorded_inputs.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/pack_sidecar.hpp"

namespace jitcache {
namespace {

using namespace pack;

constexpr std::uint64_t kMaxEntries = 1u << 24;
constexpr std::uint64_t kMaxRecordSize = 4096;
constexpr std::uint64_t kMaxManifestBytes = 16u << 20;
constexpr std::uint64_t kMaxBinaryBytes = 1ull << 30;

// A member header at `offset` that must carry `name`; its data follows at offset + 512.
std::optional<TarMember> member_at(const fileops::File& file, std::uint64_t offset, const char* name,
                                   std::string* error) {
  std::string block;
  if (auto io = file.read_at(offset, kBlock, &block); io || block.size() != kBlock) {
    *error = std::string("cannot read the ") + name + " member header";
    return std::nullopt;
  }
  std::optional<TarMember> member = parse_tar_header(block);
  if (!member || member->name != name) {
    *error = std::string("not a jitcache pack: no ") + name + " member where the format puts it";
    return std::nullopt;
  }
  return member;
}

bool within(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

LoadResult corrupt(std::string reason) {
  LoadResult result;
  result.status = LoadStatus::corrupt;
  result.reason = std::move(reason);
  return result;
}

// Fields of a hostile sidecar: a field of another type reads as absent (value() would throw).
std::string text_field(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::optional<std::uint64_t> number_field(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

// Binary search of `count` rows of `stride` bytes that start with a big-endian 128-bit name, sorted.
std::optional<std::size_t> search(const unsigned char* rows, std::size_t count, std::size_t stride,
                                  const Digest128& wanted) {
  std::size_t low = 0, high = count;
  while (low < high) {
    const std::size_t middle = low + (high - low) / 2;
    const Digest128 here = decode_key(rows + middle * stride);
    if (here == wanted) return middle;
    if (here < wanted) low = middle + 1;
    else high = middle;
  }
  return std::nullopt;
}

// The first row whose name is not above the one before it (a name twice, or out of order): the
// binary search would serve one of two rows of a name, and `pack import` the other.
std::optional<Digest128> first_unsorted(const unsigned char* rows, std::size_t count, std::size_t stride) {
  for (std::size_t i = 1; i < count; ++i) {
    const Digest128 here = decode_key(rows + i * stride);
    if (!(decode_key(rows + (i - 1) * stride) < here)) return here;
  }
  return std::nullopt;
}

bool read_exact(const fileops::File& file, std::uint64_t offset, std::uint64_t size, std::string* out) {
  return !file.read_at(offset, static_cast<std::size_t>(size), out) && out->size() == size;
}

}  // namespace

std::unique_ptr<PackReader> PackReader::open(const std::filesystem::path& path, const PackTrust& trust,
                                             std::string* error) {
  std::unique_ptr<PackReader> reader(new PackReader());
  reader->path_ = path;
  auto fail = [&](const std::string& why) {
    *error = path.string() + ": " + why;
    return nullptr;
  };
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  std::string why;
  if (fileops::check_ancestors(folder, &why)) return fail("refused: " + why);
  fileops::Dir dir;
  if (auto e = fileops::Dir::open(folder, &dir)) return fail("refused folder: " + e.message());
  if (auto e = fileops::File::open_read(dir, path.filename(), &reader->file_)) return fail(e.message());
  fileops::FileInfo info;
  if (auto e = reader->file_.info(&info)) return fail(e.message());
  reader->file_size_ = info.size;

  // Everything that can refuse the pack without its index comes first: the index's
  // size against its header and the file, then the signature slot against the trusted keys. A
  // refused pack costs a few blocks, however large an index it claims.
  std::optional<TarMember> index = member_at(reader->file_, 0, kIndexMember, &why);
  if (!index) return fail(why);
  const std::uint64_t index_size = index->size;
  std::string header_bytes;
  if (index_size < kIndexHeaderSize || !within(kBlock, index_size, info.size) ||
      !read_exact(reader->file_, kBlock, kIndexHeaderSize, &header_bytes)) {
    return fail("index size out of bounds");
  }
  std::optional<IndexHeader> header = decode_header(header_bytes);
  if (!header) return fail("index magic is wrong");
  if (header->version < kFirstFormatVersion || header->version > kFormatVersion) {
    return fail("pack format version " + std::to_string(header->version) + " (this jitcache reads " +
                std::to_string(kFirstFormatVersion) + " to " + std::to_string(kFormatVersion) + ")");
  }
  if (header->checksum_algorithm != ChecksumAlgorithm::sha256 &&
      header->checksum_algorithm != ChecksumAlgorithm::xxh3_128) {
    return fail("unknown checksum algorithm " + std::to_string(static_cast<std::uint32_t>(header->checksum_algorithm)));
  }
  const std::uint64_t records_end = header->header_size + std::uint64_t{header->entry_count} * header->record_size;
  // Every entry is two members (binary and sidecar) of at least a header block each, after the index.
  const std::uint64_t least_entry_bytes = std::uint64_t{header->entry_count} * 2 * kBlock;
  if (header->header_size < kIndexHeaderSize || header->record_size < kRecordSize ||
      header->record_size > kMaxRecordSize || header->entry_count > kMaxEntries ||
      header->inputs_size > index_size || index_size != records_end + header->inputs_size ||
      !within(signature_header_offset(index_size), least_entry_bytes, info.size)) {
    return fail("index header out of bounds");
  }
  reader->header_ = *header;
  // The inputs table: rows right after the entry records, inside the index (so signed with it).
  if (header->inputs_offset != 0 || header->inputs_size != 0) {
    if (header->inputs_offset != kBlock + records_end || header->inputs_size % kInputRecordSize != 0) {
      return fail("inputs table out of bounds");
    }
    reader->inputs_at_ = static_cast<std::size_t>(records_end);
    reader->input_count_ = static_cast<std::size_t>(header->inputs_size / kInputRecordSize);
  }

  // Signature: verified whenever present; required when the consumer lists trusted keys.
  const std::uint64_t slot_header = signature_header_offset(index_size);
  std::optional<TarMember> slot_member = member_at(reader->file_, slot_header, kSignatureMember, &why);
  if (!slot_member) return fail(why);
  std::string slot;
  if (slot_member->size != kSignatureSlot || !read_exact(reader->file_, slot_header + kBlock, kSignatureSlot, &slot)) {
    return fail("signature slot is not one block");
  }
  std::optional<SlotContent> content = parse_slot(slot, &why);
  if (!content) return fail(why);
  if (content->is_signed && header->checksum_algorithm != ChecksumAlgorithm::sha256) {
    return fail("signed, but its checksums are not SHA-256 (a signature over XXH3 values vouches for nothing)");
  }
  if (trust.required) {
    if (!content->is_signed) return fail("unsigned, and trusted pack keys are set (JITCACHE_PACK_KEYS)");
    const bool trusted = std::any_of(trust.trusted_keys.begin(), trust.trusted_keys.end(),
                                     [&](const PublicKey& key) { return key.raw == content->key.raw; });
    if (!trusted) return fail("signed by key " + content->key.hex() + ", which is not a trusted pack key");
  }
  if (!read_exact(reader->file_, kBlock, index_size, &reader->index_)) return fail("index size out of bounds");
  if (content->is_signed) {
    if (!verify_signature(content->key, signed_message(reader->index_), content->signature)) {
      return fail("signature does not verify (the pack was changed after signing)");
    }
    reader->signer_ = content->key;
  }
  const auto* index_rows = reinterpret_cast<const unsigned char*>(reader->index_.data());
  if (auto at = first_unsorted(index_rows + header->header_size, header->entry_count, header->record_size)) {
    return fail("index not sorted at " + at->hex() + " (a key twice or out of order)");
  }
  if (auto at = first_unsorted(index_rows + reader->inputs_at_, reader->input_count_, kInputRecordSize)) {
    return fail("inputs table not sorted at " + at->hex() + " (a digest twice or out of order)");
  }

  const std::uint64_t manifest_header = slot_header + kBlock + kSignatureSlot;
  std::optional<TarMember> manifest = member_at(reader->file_, manifest_header, kManifestMember, &why);
  if (!manifest) return fail(why);
  std::string manifest_text;
  if (header->manifest_offset != manifest_header + kBlock || header->manifest_size != manifest->size ||
      manifest->size > kMaxManifestBytes || !within(header->manifest_offset, manifest->size, info.size) ||
      !read_exact(reader->file_, header->manifest_offset, manifest->size, &manifest_text)) {
    return fail("manifest out of bounds");
  }
  if (sha256(manifest_text) != header->manifest_sha256) return fail("manifest checksum mismatch");
  reader->manifest_ = parse_untrusted_json(manifest_text, kMaxManifestBytes);
  if (!reader->manifest_.is_object()) return fail("manifest is not a JSON object");
  reader->data_start_ = header->manifest_offset + padded(manifest->size);
  return reader;
}

bool PackReader::read_bytes(std::uint64_t offset, std::uint64_t size, std::string* out) const {
  return within(offset, size, file_size_) && read_exact(file_, offset, size, out);
}

IndexRecord PackReader::record(std::size_t i) const {
  return decode_record(reinterpret_cast<const unsigned char*>(index_.data()) + header_.header_size +
                       i * header_.record_size);
}

std::optional<std::size_t> PackReader::find(const Digest128& key) const {
  return search(reinterpret_cast<const unsigned char*>(index_.data()) + header_.header_size, header_.entry_count,
                header_.record_size, key);
}

InputIndexRecord PackReader::input_record(std::size_t i) const {
  return decode_input_record(reinterpret_cast<const unsigned char*>(index_.data()) + inputs_at_ + i * kInputRecordSize);
}

std::optional<std::size_t> PackReader::find_input(const Digest128& digest) const {
  return search(reinterpret_cast<const unsigned char*>(index_.data()) + inputs_at_, input_count_, kInputRecordSize,
                digest);
}

LoadResult PackReader::load_input(const Digest128& digest) const {
  std::optional<std::size_t> found = find_input(digest);
  return found ? load_input_record(input_record(*found)) : LoadResult{};
}

LoadResult PackReader::load_input_record(const InputIndexRecord& record) const {
  const std::string name = "inputs record " + record.digest.hex();
  if (record.offset < data_start_ || record.size > kMaxRecordedInputsBytes ||
      !within(record.offset, record.size, file_size_)) {
    return corrupt(name + ": offsets out of bounds");
  }
  LoadResult result;
  if (!read_exact(file_, record.offset, record.size, &result.binary)) {
    result.status = LoadStatus::error;
    result.reason = name + ": read failed";
    result.binary.clear();
    return result;
  }
  if (checksum(header_.checksum_algorithm, result.binary) != record.checksum) return corrupt(name + ": checksum mismatch");
  if (xxh3_128(result.binary) != record.digest) return corrupt(name + ": does not match its name");
  result.status = LoadStatus::hit;
  return result;
}

LoadResult PackReader::load(const Digest128& key, bool whole_sidecar) const {
  std::optional<std::size_t> found = find(key);
  if (!found) return {};
  // Its key is `key`: load_record checks that the sidecar names it.
  return load_record(record(*found), /*full_check=*/false, whole_sidecar);
}

LoadResult PackReader::load_record(const IndexRecord& record, bool full_check, bool whole_sidecar) const {
  const std::string key = record.key.hex();
  if (record.sidecar_offset < data_start_ || record.binary_offset < data_start_ ||
      record.sidecar_size > store_detail::kMaxSidecarBytes || record.binary_size > kMaxBinaryBytes ||
      !within(record.sidecar_offset, record.sidecar_size, file_size_) ||
      !within(record.binary_offset, record.binary_size, file_size_)) {
    return corrupt("entry " + key + ": offsets out of bounds");
  }
  LoadResult result;
  std::string sidecar_text;
  if (!read_exact(file_, record.sidecar_offset, record.sidecar_size, &sidecar_text) ||
      !read_exact(file_, record.binary_offset, record.binary_size, &result.binary)) {
    result.status = LoadStatus::error;
    result.reason = "entry " + key + ": read failed";
    result.binary.clear();
    return result;
  }
  const ChecksumAlgorithm algorithm = header_.checksum_algorithm;
  if (checksum(algorithm, sidecar_text) != record.sidecar_checksum) {
    return corrupt("entry " + key + ": sidecar checksum mismatch");
  }
  // The binary is checked once: against the index when the index's checksum vouches for it (an
  // XXH3-128 pack: cheap; a signed pack: the signature covers it; or a full check), else against the
  // XXH3-64 its checked sidecar names, as the disk store checks its entries. The writer refuses an
  // entry whose sidecar does not describe its binary, so both say the same of an intact pack; a
  // full check (verify, import, merge) makes both.
  const bool index_checks_binary = algorithm == ChecksumAlgorithm::xxh3_128 || signer_ || full_check;
  if (index_checks_binary && checksum(algorithm, result.binary) != record.binary_checksum) {
    return corrupt("entry " + key + ": binary checksum mismatch");
  }
  // Checked against the index's checksum above, so what is left out of the parse is what the pack's
  // writer wrote; a hit does not read it.
  std::optional<HitFields> lighter = whole_sidecar ? std::nullopt : hit_fields(sidecar_text, kHitFields, kAnswersTextField);
  result.sidecar = lighter ? std::move(lighter->fields) : parse_untrusted_json(sidecar_text, store_detail::kMaxSidecarBytes);
  if (lighter) result.answers = std::move(lighter->as_text);
  if (!result.sidecar.is_object() || text_field(result.sidecar, store_detail::kKeyField) != key ||
      number_field(result.sidecar, store_detail::kSizeField) != record.binary_size ||
      ((!index_checks_binary || full_check) &&
       text_field(result.sidecar, store_detail::kChecksumField) != hex64(xxh3_64(result.binary)))) {
    return corrupt("entry " + key + ": binary checksum mismatch (the sidecar does not describe this binary)");
  }
  result.status = LoadStatus::hit;
  return result;
}

}  // namespace jitcache

// Reading one pack (docs/pack-format.md) as a read-only cache tier. Everything in the file is
// hostile: every offset and size is checked against the file and the caps before it is used, every
// entry's bytes against the checksum the index holds, and the sidecar against the key looked up.
// A damaged entry is refused alone (the rest of the pack serves); a damaged index header,
// manifest or signature refuses the whole pack at open. Never throws; never writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "store/pack/pack_format.hpp"
#include "store/pack/pack_signature.hpp"

namespace jitcache {

// What a consumer requires of a pack's signature.
struct PackTrust {
  std::vector<pack::PublicKey> trusted_keys;  // non-empty: only packs signed by one of these are used
  bool required = false;                      // true whenever the consumer listed keys
};

class PackReader {
 public:
  // Opens a pack file: a regular file owned by this user or root, writable by nobody else, in a
  // folder that passes the same rule (as a read-only shared root). nullptr + `error` when refused.
  static std::unique_ptr<PackReader> open(const std::filesystem::path& path, const PackTrust& trust,
                                          std::string* error);

  const std::filesystem::path& path() const { return path_; }
  std::uint64_t file_size() const { return file_size_; }
  std::size_t entry_count() const { return header_.entry_count; }
  const nlohmann::json& manifest() const { return manifest_; }
  const pack::IndexHeader& header() const { return header_; }
  const std::string& index_bytes() const { return index_; }
  // The key that signed the pack when its signature verified; nullopt when unsigned.
  const std::optional<pack::PublicKey>& signer() const { return signer_; }

  // hit (binary + sidecar), miss (not in the index), corrupt (refused: the reason says why) or
  // error (the file could not be read). The tier's lookup parses only the sidecar fields a hit
  // reads (pack::kHitFields, store/local/pack_sidecar.hpp), unless `whole_sidecar`. Every check is made
  // either way.
  LoadResult load(const Digest128& key, bool whole_sidecar = false) const;
  // The index record of `i` (0 <= i < entry_count), in key order.
  pack::IndexRecord record(std::size_t i) const;
  // Reads and checks one entry by its record (what load() does after the index search). The
  // binary is checked against the index's checksum in an XXH3-128 pack, in a signed pack (SHA-256:
  // the signature vouches for those digests only) or when `full_check` asks; in an unsigned
  // SHA-256 pack (version 1) against the XXH3-64 its checked sidecar names, as the disk store does.
  LoadResult load_record(const pack::IndexRecord& record, bool full_check = false, bool whole_sidecar = true) const;

  // Recorded build inputs (the optional inputs table, docs/pack-format.md): how many records the
  // pack carries, the i-th row in digest order, and one record's bytes (in LoadResult::binary),
  // checked against its checksum in the index and against its name (XXH3-128), within the cap of
  // a store's records. hit, miss (not in this pack), corrupt or error, as load().
  std::size_t input_count() const { return input_count_; }
  pack::InputIndexRecord input_record(std::size_t i) const;
  LoadResult load_input(const Digest128& digest) const;
  LoadResult load_input_record(const pack::InputIndexRecord& record) const;
  // `size` bytes at `offset`, unchecked (pack sign re-hashes members it checked); false when out
  // of the file or the read fails.
  bool read_bytes(std::uint64_t offset, std::uint64_t size, std::string* out) const;

 private:
  PackReader() = default;
  std::optional<std::size_t> find(const Digest128& key) const;
  std::optional<std::size_t> find_input(const Digest128& digest) const;

  std::filesystem::path path_;
  fileops::File file_;
  std::uint64_t file_size_ = 0;
  std::uint64_t data_start_ = 0;  // entries begin after the manifest
  pack::IndexHeader header_;
  std::string index_;  // the index member's data: header, entry records, input rows
  std::size_t input_count_ = 0;
  std::size_t inputs_at_ = 0;  // where the input rows start in index_
  nlohmann::json manifest_;
  std::optional<pack::PublicKey> signer_;
};

}  // namespace jitcache

#include "store/pack/pack_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashing/recorded_inputs.hpp"
#include "store/files/user_path.hpp"
#include "store/local/entry_check.hpp"
#include "store/pack/pack_format.hpp"
#include "store/pack/pack_reader.hpp"
#include "store/pack/pack_signature.hpp"

namespace jitcache {
namespace {

using namespace pack;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

bool write_at(int fd, std::uint64_t offset, std::string_view data) {
  while (!data.empty()) {
    const ssize_t put = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(put));
    offset += static_cast<std::uint64_t>(put);
  }
  return true;
}

// The members' ustar headers and data, buffered into 1 MiB writes (a member larger than the buffer
// is written straight from its bytes); its position is its own byte count. The headers are ours
// rather than libarchive's (docs/decisions/store.md, "Packs write their own tar headers": 5 % of
// the writer's time at 4 KiB, and one dependency less); the tests read every pack back with
// libarchive and with tar.
class TarWriter {
 public:
  explicit TarWriter(int fd) : fd_(fd) { buffer_.reserve(kBufferBytes); }
  bool add(std::string_view name, std::string_view data, std::time_t mtime) {
    std::optional<std::string> header = tar_header(name, data.size(), mtime);
    if (!header) return fail("member " + std::string(name) + " does not fit a ustar header");
    buffer_ += *header;
    if (data.size() >= kBufferBytes) {
      if (!flush() || !write_all(data)) return false;
      written_ += data.size();
    } else {
      buffer_.append(data);
    }
    buffer_.append(padded(data.size()) - data.size(), '\0');
    return buffer_.size() < kBufferBytes || flush();
  }
  bool close() {
    buffer_.append(2 * kBlock, '\0');  // the end of a tar archive
    return flush();
  }
  const std::string& error() const { return error_; }
  std::uint64_t offset() const { return written_ + buffer_.size(); }  // where the next member's header goes

 private:
  static constexpr std::size_t kBufferBytes = 1 << 20;
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool write_all(std::string_view data) {
    while (!data.empty()) {
      const ssize_t put = ::write(fd_, data.data(), data.size());
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return fail(std::strerror(errno));
      data.remove_prefix(static_cast<std::size_t>(put));
    }
    return true;
  }
  bool flush() {
    const bool ok = write_all(buffer_);
    written_ += buffer_.size();
    buffer_.clear();
    return ok;
  }
  int fd_;
  std::uint64_t written_ = 0;
  std::string buffer_;
  std::string error_;
};

// A sidecar as one line of JSON: every pack hit parses its sidecar, and the store's indented form
// takes about twice as long to parse (measured: 8.7 KB indented vs 4.6 KB compact).
std::string compact_sidecar(const nlohmann::json& sidecar) {
  return sidecar.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string text_of(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What a reader checks of every entry, checked once here: a reader whose index checksum covers the
// binary does not hash it a second time for the sidecar's XXH3-64.
bool describes_its_binary(const PackEntry& entry) {
  if (!entry.sidecar.is_object()) return false;
  auto size = entry.sidecar.find(store_detail::kSizeField);
  return text_of(entry.sidecar, store_detail::kKeyField) == entry.key.hex() && size != entry.sidecar.end() &&
         size->is_number_unsigned() && size->get<std::uint64_t>() == entry.binary.size() &&
         text_of(entry.sidecar, store_detail::kChecksumField) == hex64(xxh3_64(entry.binary));
}

// Pointers to `items` in the order of `name_of` (a Digest128).
template <typename T, typename Name>
std::vector<const T*> sorted_by(const std::vector<T>& items, Name name_of) {
  std::vector<const T*> sorted;
  sorted.reserve(items.size());
  for (const T& item : items) sorted.push_back(&item);
  std::sort(sorted.begin(), sorted.end(), [&](const T* a, const T* b) { return name_of(*a) < name_of(*b); });
  return sorted;
}

}  // namespace

nlohmann::json describe_entries(const std::vector<PackEntry>& entries) {
  std::set<std::string> devices, apis, kinds;
  std::map<std::string, nlohmann::json> compilers;  // by digest
  std::uint64_t binary_bytes = 0;
  for (const PackEntry& entry : entries) {
    binary_bytes += entry.binary.size();
    if (!entry.sidecar.is_object()) continue;
    if (std::string device = text_of(entry.sidecar, "device"); !device.empty()) devices.insert(device);
    if (std::string api = text_of(entry.sidecar, "api"); !api.empty()) apis.insert(api);
    auto components = entry.sidecar.find("components");
    if (components == entry.sidecar.end() || !components->is_object()) continue;
    auto compiler = components->find("compiler");
    if (compiler != components->end() && compiler->is_object()) {
      compilers.emplace(text_of(*compiler, "digest"), compiler->value("value", nlohmann::json()));
    }
  }
  nlohmann::json compiler_list = nlohmann::json::array();
  for (const auto& [digest, value] : compilers) compiler_list.push_back({{"digest", digest}, {"value", value}});
  return {{"entries", entries.size()},
          {"binary_bytes", binary_bytes},
          {"apis", apis},
          {"devices", devices},
          {"compilers", compiler_list}};
}

bool write_pack(const std::filesystem::path& path, const std::vector<PackEntry>& entry_list,
                const std::vector<PackInput>& input_list, const PackWriteOptions& options, std::string* error) {
  // Sorted views: the caller's entries are read in place, never copied.
  const std::vector<const PackEntry*> entries = sorted_by(entry_list, [](const PackEntry& e) { return e.key; });
  if (std::adjacent_find(entries.begin(), entries.end(), [](const PackEntry* a, const PackEntry* b) {
        return a->key == b->key;
      }) != entries.end()) {
    *error = "two entries with the same key";
    return false;
  }
  const std::vector<const PackInput*> inputs = sorted_by(input_list, [](const PackInput& e) { return e.digest; });
  std::uint64_t input_bytes = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0 && inputs[i - 1]->digest == inputs[i]->digest) {
      *error = "two inputs records with the same digest";
      return false;
    }
    if (inputs[i]->bytes.size() > kMaxRecordedInputsBytes || xxh3_128(inputs[i]->bytes) != inputs[i]->digest) {
      *error = "inputs record " + inputs[i]->digest.hex() + " does not match its digest or is over its cap";
      return false;
    }
    input_bytes += inputs[i]->bytes.size();
  }
  nlohmann::json manifest = describe_entries(entry_list);
  manifest["format"] = "jitcache-pack";
  const ChecksumAlgorithm algorithm =
      options.signing_key_pem.empty() ? options.unsigned_checksum : ChecksumAlgorithm::sha256;
  const std::uint32_t version = algorithm == ChecksumAlgorithm::sha256 ? kFirstFormatVersion : kFormatVersion;
  manifest["format_version"] = version;
  manifest["producer"] = options.producer;
  manifest["created"] = utc_now();
  manifest["inputs"] = !inputs.empty();
  manifest["input_records"] = inputs.size();
  manifest["input_bytes"] = input_bytes;
  for (const auto& [name, value] : options.extra_manifest.items()) manifest[name] = value;
  const std::string manifest_text = manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";

  // The index comes first and names every offset and digest, but its size depends only on the
  // counts: it is written with the members' places and digests left zero, which are filled in as
  // each member is written, and rewritten in place at the end. So each sidecar is dumped right
  // before it is written and nothing is held (all sidecars dumped first cost more in malloc and
  // page faults than the dump itself: perf, 10 000 entries of 4 KiB).
  IndexHeader header;
  header.version = version;
  header.checksum_algorithm = algorithm;
  header.entry_count = static_cast<std::uint32_t>(entries.size());
  const std::uint64_t records_end = kIndexHeaderSize + entries.size() * kRecordSize;
  const std::uint64_t index_size = records_end + inputs.size() * kInputRecordSize;
  header.manifest_offset = signature_data_offset(index_size) + kSignatureSlot + kBlock;
  header.manifest_size = manifest_text.size();
  header.manifest_sha256 = sha256(manifest_text);
  if (!inputs.empty()) {
    header.inputs_offset = kBlock + records_end;
    header.inputs_size = inputs.size() * kInputRecordSize;
  }
  std::vector<IndexRecord> records(entries.size());
  std::vector<InputIndexRecord> rows(inputs.size());
  auto encode_index = [&] {
    std::string index = encode_header(header);
    index.reserve(index_size);
    for (const IndexRecord& record : records) index += encode_record(record);
    for (const InputIndexRecord& row : rows) index += encode_input_record(row);
    return index;
  };

  // A pack is meant to be shared read-only (0644 whatever the umask), and replaces only a regular file.
  AtomicOutput output;
  if (!output.begin(path, 0644, error)) return false;
  const int fd = static_cast<int>(output.file().native_handle());
  const std::time_t mtime = std::time(nullptr);
  TarWriter tar(fd);
  bool ok = tar.add(kIndexMember, encode_index(), mtime) && tar.add(kSignatureMember, unsigned_slot(), mtime) &&
            tar.add(kManifestMember, manifest_text, mtime);
  ok = ok && tar.offset() == header.manifest_offset + padded(manifest_text.size());
  for (std::size_t i = 0; ok && i < entries.size(); ++i) {
    const PackEntry& entry = *entries[i];
    if (!describes_its_binary(entry)) {
      *error = "entry " + entry.key.hex() + ": its sidecar does not describe its binary (key, binary_size, binary_xxh3_64)";
      return false;
    }
    const std::string sidecar = compact_sidecar(entry.sidecar);
    IndexRecord& record = records[i];
    record.key = entry.key;
    record.sidecar_size = sidecar.size();
    record.sidecar_checksum = checksum(algorithm, sidecar);  // while the bytes are in cache, right before writing
    record.sidecar_offset = tar.offset() + kBlock;
    ok = tar.add(entry_member(entry.key, false), sidecar, mtime);
    record.binary_size = entry.binary.size();
    record.binary_checksum = checksum(algorithm, entry.binary);
    record.binary_offset = tar.offset() + kBlock;
    ok = ok && tar.add(entry_member(entry.key, true), entry.binary, mtime);
    if (options.progress) options.progress(i + 1, entries.size());
  }
  for (std::size_t i = 0; ok && i < inputs.size(); ++i) {
    rows[i].digest = inputs[i]->digest;
    rows[i].size = inputs[i]->bytes.size();
    rows[i].checksum = checksum(algorithm, inputs[i]->bytes);
    rows[i].offset = tar.offset() + kBlock;
    ok = tar.add(input_member(inputs[i]->digest), inputs[i]->bytes, mtime);
  }
  const std::uint64_t expected_size = tar.offset() + 2 * kBlock;  // the two zero blocks that end a tar
  ok = ok && tar.close();
  if (!ok) {
    *error = "writing " + path.string() + ": " + (tar.error().empty() ? "layout error" : tar.error());
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != expected_size) {
    *error = "internal: the archive is not laid out as the index says (" + std::to_string(st.st_size) + " bytes, " +
             std::to_string(expected_size) + " expected)";
    return false;
  }
  // The index again, now with every digest (same size, same place), and the signature over it.
  const std::string index = encode_index();
  std::string slot = unsigned_slot();
  if (!options.signing_key_pem.empty()) {
    std::optional<std::string> signed_slot = sign_slot(options.signing_key_pem, signed_message(index), error);
    if (!signed_slot) return false;
    slot = *signed_slot;
  }
  if (!write_at(fd, kBlock, index) || !write_at(fd, signature_data_offset(index_size), slot)) {
    *error = "cannot write " + output.temp_path().string() + ": " + std::strerror(errno);
    return false;
  }
  return output.commit(error);
}

namespace {

// The index of an XXH3-128 pack with SHA-256 checksums (format version 1), every member checked in
// full first and hashed from the same bytes; nullopt + `error` when a member does not check.
std::optional<std::string> index_with_sha256(const PackReader& reader, std::string* error) {
  std::string index = reader.index_bytes();
  const IndexHeader& header = reader.header();
  auto patch = [&](std::size_t at, const Checksum& value) { std::memcpy(index.data() + at, value.data(), value.size()); };
  auto rehash = [&](std::uint64_t offset, std::uint64_t size, const Checksum& expected, std::size_t at,
                    const std::string& what) {
    std::string bytes;
    if (!reader.read_bytes(offset, size, &bytes) || checksum(ChecksumAlgorithm::xxh3_128, bytes) != expected) {
      *error = what + " does not match its checksum: the pack is damaged, not signed";
      return false;
    }
    patch(at, sha256(bytes));
    return true;
  };
  for (std::size_t i = 0; i < reader.entry_count(); ++i) {
    const IndexRecord record = reader.record(i);
    LoadResult loaded = reader.load_record(record, /*full_check=*/true);
    const std::size_t at = header.header_size + i * header.record_size;
    if (loaded.status != LoadStatus::hit) {
      *error = "entry " + record.key.hex() + ": " + loaded.reason + ": the pack is damaged, not signed";
      return std::nullopt;
    }
    if (!rehash(record.binary_offset, record.binary_size, record.binary_checksum, at + 48, "entry " + record.key.hex()) ||
        !rehash(record.sidecar_offset, record.sidecar_size, record.sidecar_checksum, at + 80,
                "entry " + record.key.hex() + "'s sidecar")) {
      return std::nullopt;
    }
  }
  const std::size_t rows_at = header.header_size + std::size_t{header.entry_count} * header.record_size;
  for (std::size_t i = 0; i < reader.input_count(); ++i) {
    const InputIndexRecord row = reader.input_record(i);
    if (reader.load_input_record(row).status != LoadStatus::hit ||
        !rehash(row.offset, row.size, row.checksum, rows_at + i * kInputRecordSize + 32, "inputs record " + row.digest.hex())) {
      if (error->empty()) *error = "inputs record " + row.digest.hex() + " does not check: the pack is damaged, not signed";
      return std::nullopt;
    }
  }
  IndexHeader version1;
  version1.version = kFirstFormatVersion;  // SHA-256 throughout: every reader reads it
  index.replace(8, 4, encode_header(version1).substr(8, 4));
  index.replace(88, 4, std::string(4, '\0'));
  return index;
}

}  // namespace

bool sign_pack(const std::filesystem::path& path, const std::string& signing_key_pem, std::string* error) {
  std::unique_ptr<PackReader> reader = PackReader::open(path, PackTrust{}, error);
  if (!reader) return false;
  std::string index = reader->index_bytes();
  if (reader->header().checksum_algorithm != ChecksumAlgorithm::sha256) {
    std::optional<std::string> rehashed = index_with_sha256(*reader, error);
    if (!rehashed) return false;
    index = std::move(*rehashed);
  }
  std::optional<std::string> slot = sign_slot(signing_key_pem, signed_message(index), error);
  if (!slot) return false;
  AtomicOutput output;
  if (!output.begin(path, 0644, error)) return false;
  const int fd = static_cast<int>(output.file().native_handle());
  // Copied from the file the reader checked (never the path again: it may have been replaced).
  std::string buffer;
  std::uint64_t copied = 0;
  constexpr std::size_t kChunk = 1 << 20;
  while (copied < reader->file_size()) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, reader->file_size() - copied));
    if (!reader->read_bytes(copied, want, &buffer) || buffer.size() != want || !write_at(fd, copied, buffer)) {
      *error = std::string("copy failed: ") + std::strerror(errno);
      return false;
    }
    copied += want;
  }
  const std::uint64_t slot_offset = signature_data_offset(index.size());
  if (!write_at(fd, kBlock, index) || !write_at(fd, slot_offset, *slot)) {
    *error = "could not rewrite the signature slot";
    return false;
  }
  return output.commit(error);
}

}  // namespace jitcache

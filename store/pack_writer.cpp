#include "store/pack_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <fstream>
#include <set>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/entry_check.hpp"
#include "store/pack_format.hpp"
#include "store/pack_reader.hpp"
#include "store/pack_signature.hpp"

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

// A temp file next to `path` (same file system, so the rename is atomic), removed unless kept.
struct TempFile {
  std::filesystem::path path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

bool create_temp(const std::filesystem::path& target, TempFile* temp, std::string* error) {
  const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  temp->path = target.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(stamp);
  temp->fd = ::open(temp->path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (temp->fd < 0) {
    *error = "cannot create " + temp->path.string() + ": " + std::strerror(errno);
    temp->path.clear();
    return false;
  }
  ::fchmod(temp->fd, 0644);  // a pack is meant to be shared read-only: whatever the umask
  return true;
}

bool commit(TempFile* temp, const std::filesystem::path& target, std::string* error) {
  if (::fsync(temp->fd) != 0 || ::close(temp->fd) != 0) {
    temp->fd = -1;
    *error = "cannot write " + temp->path.string() + ": " + std::strerror(errno);
    return false;
  }
  temp->fd = -1;
  if (::rename(temp->path.c_str(), target.c_str()) != 0) {
    *error = "cannot rename into " + target.string() + ": " + std::strerror(errno);
    return false;
  }
  temp->keep = true;
  return true;
}

class TarWriter {
 public:
  TarWriter() : archive_(archive_write_new()) {}
  ~TarWriter() { archive_write_free(archive_); }
  bool open(int fd) {
    // Writes in 1 MiB blocks (fewer system calls), the last block unpadded: the file ends right
    // after the two zero blocks, where the layout says.
    return archive_ && archive_write_set_format_ustar(archive_) == ARCHIVE_OK &&
           archive_write_set_bytes_per_block(archive_, 1 << 20) == ARCHIVE_OK &&
           archive_write_set_bytes_in_last_block(archive_, 1) == ARCHIVE_OK &&
           archive_write_open_fd(archive_, fd) == ARCHIVE_OK;
  }
  bool add(const std::string& name, std::string_view data, std::time_t mtime) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(data.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_mtime(entry, mtime, 0);
    bool ok = archive_write_header(archive_, entry) == ARCHIVE_OK &&
              archive_write_data(archive_, data.data(), data.size()) == static_cast<la_ssize_t>(data.size());
    archive_entry_free(entry);
    return ok;
  }
  bool close() { return archive_write_close(archive_) == ARCHIVE_OK; }
  std::string error() const {
    const char* text = archive_error_string(archive_);
    return text ? text : "libarchive failed";
  }

 private:
  archive* archive_;
};

std::string text_of(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
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

bool write_pack(const std::filesystem::path& path, std::vector<PackEntry> entries, const PackWriteOptions& options,
                std::string* error) {
  std::sort(entries.begin(), entries.end(), [](const PackEntry& a, const PackEntry& b) { return a.key < b.key; });
  if (std::adjacent_find(entries.begin(), entries.end(), [](const PackEntry& a, const PackEntry& b) {
        return a.key == b.key;
      }) != entries.end()) {
    *error = "two entries with the same key";
    return false;
  }
  nlohmann::json manifest = describe_entries(entries);
  manifest["format"] = "jitcache-pack";
  manifest["format_version"] = kFormatVersion;
  manifest["producer"] = options.producer;
  manifest["created"] = utc_now();
  manifest["inputs"] = false;  // the optional inputs section (recorded build inputs) is not written yet
  for (const auto& [name, value] : options.extra_manifest.items()) manifest[name] = value;
  const std::string manifest_text = manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";

  // The layout, computed before writing: the index comes first and names every offset.
  std::vector<std::string> sidecars;
  sidecars.reserve(entries.size());
  for (const PackEntry& entry : entries) sidecars.push_back(store_detail::sidecar_text(entry.sidecar));
  IndexHeader header;
  header.entry_count = static_cast<std::uint32_t>(entries.size());
  const std::uint64_t index_size = kIndexHeaderSize + entries.size() * kRecordSize;
  header.manifest_offset = signature_data_offset(index_size) + kSignatureSlot + kBlock;
  header.manifest_size = manifest_text.size();
  header.manifest_sha256 = sha256(manifest_text);
  std::string index = encode_header(header);
  std::uint64_t offset = header.manifest_offset + padded(manifest_text.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    IndexRecord record;
    record.key = entries[i].key;
    record.sidecar_offset = offset + kBlock;
    record.sidecar_size = sidecars[i].size();
    record.sidecar_sha256 = sha256(sidecars[i]);
    offset = record.sidecar_offset + padded(record.sidecar_size);
    record.binary_offset = offset + kBlock;
    record.binary_size = entries[i].binary.size();
    record.binary_sha256 = sha256(entries[i].binary);
    offset = record.binary_offset + padded(record.binary_size);
    index += encode_record(record);
  }
  const std::uint64_t expected_size = offset + 2 * kBlock;  // the two zero blocks that end a tar

  std::string slot = unsigned_slot();
  if (!options.signing_key_pem.empty()) {
    std::optional<std::string> signed_slot = sign_slot(options.signing_key_pem, signed_message(index), error);
    if (!signed_slot) return false;
    slot = *signed_slot;
  }

  TempFile temp;
  if (!create_temp(path, &temp, error)) return false;
  const std::time_t mtime = std::time(nullptr);
  TarWriter tar;
  bool ok = tar.open(temp.fd) && tar.add(kIndexMember, index, mtime) && tar.add(kSignatureMember, slot, mtime) &&
            tar.add(kManifestMember, manifest_text, mtime);
  for (std::size_t i = 0; ok && i < entries.size(); ++i) {
    ok = tar.add(entry_member(entries[i].key, false), sidecars[i], mtime) &&
         tar.add(entry_member(entries[i].key, true), entries[i].binary, mtime);
    if (options.progress) options.progress(i + 1, entries.size());
  }
  ok = ok && tar.close();
  if (!ok) {
    *error = "writing " + path.string() + ": " + tar.error();
    return false;
  }
  struct stat st {};
  if (::fstat(temp.fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != expected_size) {
    *error = "internal: the archive is not laid out as the index says (" + std::to_string(st.st_size) + " bytes, " +
             std::to_string(expected_size) + " expected)";
    return false;
  }
  return commit(&temp, path, error);
}

bool sign_pack(const std::filesystem::path& path, const std::string& signing_key_pem, std::string* error) {
  std::unique_ptr<PackReader> reader = PackReader::open(path, PackTrust{}, error);
  if (!reader) return false;
  std::optional<std::string> slot = sign_slot(signing_key_pem, signed_message(reader->index_bytes()), error);
  if (!slot) return false;
  TempFile temp;
  if (!create_temp(path, &temp, error)) return false;
  std::ifstream in(path, std::ios::binary);
  std::string buffer(1 << 20, '\0');
  std::uint64_t copied = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got && ::pwrite(temp.fd, buffer.data(), got, static_cast<off_t>(copied)) != static_cast<ssize_t>(got)) {
      *error = std::string("copy failed: ") + std::strerror(errno);
      return false;
    }
    copied += got;
  }
  const std::uint64_t slot_offset = signature_data_offset(reader->index_bytes().size());
  if (copied != reader->file_size() ||
      ::pwrite(temp.fd, slot->data(), slot->size(), static_cast<off_t>(slot_offset)) != static_cast<ssize_t>(slot->size())) {
    *error = "could not rewrite the signature slot";
    return false;
  }
  return commit(&temp, path, error);
}

}  // namespace jitcache

// Packs written by the real writer (which lays out its own ustar headers; libarchive and tar read
// them back as an independent check) and read back by the reader the engine uses:
// lookups by key, one damaged entry refused while the others serve, damaged or foreign layouts
// refused whole, and the signature rules (trusted, untrusted, unsigned, changed after signing).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <random>

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "hashing/recorded_inputs.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/pack_sidecar.hpp"
#include "store/pack/pack_members.hpp"
#include "store/pack/pack_reader.hpp"
#include "store/pack/pack_set.hpp"
#include "store/pack/pack_writer.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "jitcache-pack-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempFolder() { fs::remove_all(path); }
};

PackEntry make_entry(int i) {
  PackEntry entry;
  entry.key = xxh3_128("key " + std::to_string(i));
  entry.binary = "binary of entry " + std::to_string(i) + std::string(100 + i, static_cast<char>('a' + i % 26));
  entry.sidecar = {{"schema", 1}, {"api", "opencl"}, {"kind", "source"}, {"device", "test device"},
                   {"kernel_names", {"kernel_" + std::to_string(i)}}};
  store_detail::add_integrity_fields(&entry.sidecar, entry.key.hex(), entry.binary);
  return entry;
}

// A real recorded-inputs record, as a store keeps it (named by its XXH3-128).
PackInput make_input(int i) {
  RecordedInputs inputs;
  inputs.input = "__kernel void k" + std::to_string(i) + "(__global int* out) { out[0] = " + std::to_string(i) + "; }";
  inputs.options = "-cl-fast-relaxed-math";
  PackInput record;
  record.bytes = encode_recorded_inputs(inputs);
  record.digest = xxh3_128(record.bytes);
  return record;
}

std::vector<PackInput> make_inputs(int count) {
  std::vector<PackInput> inputs;
  for (int i = 0; i < count; ++i) inputs.push_back(make_input(i));
  return inputs;
}

std::vector<PackEntry> make_entries(int count) {
  std::vector<PackEntry> entries;
  for (int i = 0; i < count; ++i) entries.push_back(make_entry(i));
  return entries;
}

// A fresh Ed25519 key pair: private PEM (what the producer signs with) and public PEM.
std::pair<std::string, std::string> make_key_pair() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  auto pem = [&](bool is_private) {
    BIO* bio = BIO_new(BIO_s_mem());
    if (is_private) PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    else PEM_write_bio_PUBKEY(bio, key);
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<std::size_t>(size));
    BIO_free(bio);
    return text;
  };
  auto pair = std::make_pair(pem(true), pem(false));
  EVP_PKEY_free(key);
  return pair;
}

void flip_byte(const fs::path& file, std::uint64_t offset) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  stream.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  stream.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x01);
  stream.seekp(static_cast<std::streamoff>(offset));
  stream.write(&byte, 1);
}

class PackTest : public ::testing::Test {
 protected:
  TempFolder folder;
  fs::path pack = folder.path / "app.jcpack";

  void write(const std::vector<PackEntry>& entries, const std::string& signing_key = "",
             const std::vector<PackInput>& inputs = {}) {
    PackWriteOptions options;
    options.producer = "store_pack_test";
    options.signing_key_pem = signing_key;
    std::string error;
    ASSERT_TRUE(write_pack(pack, entries, inputs, options, &error)) << error;
  }
  std::unique_ptr<PackReader> open(const PackTrust& trust = {}) {
    std::string error;
    auto reader = PackReader::open(pack, trust, &error);
    EXPECT_TRUE(reader) << error;
    return reader;
  }
  // The index record of `key` in the pack as written now.
  pack::IndexRecord record_of(const Digest128& key) {
    auto reader = open();
    for (std::size_t i = 0; reader && i < reader->entry_count(); ++i) {
      if (reader->record(i).key == key) return reader->record(i);
    }
    ADD_FAILURE() << "no record for " << key.hex();
    return {};
  }
  std::string refusal(const PackTrust& trust = {}) {
    std::string error;
    EXPECT_FALSE(PackReader::open(pack, trust, &error));
    return error;
  }
};

TEST_F(PackTest, EveryEntryIsFoundByKeyAndOthersMiss) {
  write(make_entries(50));
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->entry_count(), 50u);
  EXPECT_EQ(reader->manifest().value("entries", 0), 50);
  EXPECT_EQ(reader->manifest().value("producer", ""), "store_pack_test");
  for (int i = 0; i < 50; ++i) {
    const PackEntry expected = make_entry(i);
    LoadResult loaded = reader->load(expected.key, /*whole_sidecar=*/true);
    ASSERT_EQ(loaded.status, LoadStatus::hit) << i << " " << loaded.reason;
    EXPECT_EQ(loaded.binary, expected.binary);
    EXPECT_EQ(loaded.sidecar["kernel_names"][0], "kernel_" + std::to_string(i));
  }
  EXPECT_EQ(reader->load(xxh3_128("not in the pack")).status, LoadStatus::miss);
}

TEST_F(PackTest, IsAPlainTarArchive) {
  write(make_entries(3));
  const std::string listing = "tar tf " + pack.string() + " > " + (folder.path / "listing").string();
  ASSERT_EQ(std::system(listing.c_str()), 0);
  std::ifstream in(folder.path / "listing");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("jitcache-pack/index"), std::string::npos);
  EXPECT_NE(text.find("jitcache-pack/manifest.json"), std::string::npos);
  EXPECT_NE(text.find("entries/" + make_entry(1).key.hex() + ".bin"), std::string::npos);
}

// The writer lays out its own ustar headers: libarchive (strict ustar reader) and GNU tar must
// read every member back with its name, mode, size and bytes, in the format's order, with members
// larger than the writer's 1 MiB buffer, of exactly one block, and empty.
TEST_F(PackTest, LibarchiveAndTarReadEveryMemberTheWriterLaysOut) {
  std::vector<PackEntry> entries = make_entries(3);
  entries[0].binary = std::string((3 << 20) / 2 + 7, 'x');
  entries[1].binary = std::string(512, 'y');
  entries[2].binary.clear();
  for (PackEntry& entry : entries) store_detail::add_integrity_fields(&entry.sidecar, entry.key.hex(), entry.binary);
  std::vector<PackInput> inputs = make_inputs(2);
  write(entries, "", inputs);
  std::sort(entries.begin(), entries.end(), [](const PackEntry& a, const PackEntry& b) { return a.key < b.key; });
  std::sort(inputs.begin(), inputs.end(), [](const PackInput& a, const PackInput& b) { return a.digest < b.digest; });
  std::vector<std::string> expected = {pack::kIndexMember, pack::kSignatureMember, pack::kManifestMember};
  for (const PackEntry& entry : entries) {
    expected.push_back(pack::entry_member(entry.key, false));
    expected.push_back(pack::entry_member(entry.key, true));
  }
  for (const PackInput& input : inputs) expected.push_back(pack::input_member(input.digest));

  archive* reader = archive_read_new();
  ASSERT_EQ(archive_read_support_format_tar(reader), ARCHIVE_OK);
  ASSERT_EQ(archive_read_open_filename(reader, pack.c_str(), 10240), ARCHIVE_OK);
  std::vector<std::string> names;
  archive_entry* member = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(reader, &member)) == ARCHIVE_OK) {
    const std::string name = archive_entry_pathname(member);
    names.push_back(name);
    EXPECT_EQ(archive_format(reader), ARCHIVE_FORMAT_TAR_USTAR) << name;
    EXPECT_EQ(archive_entry_filetype(member), AE_IFREG) << name;
    EXPECT_EQ(archive_entry_perm(member), 0644) << name;
    std::string data(static_cast<std::size_t>(archive_entry_size(member)), '\0');
    ASSERT_EQ(archive_read_data(reader, data.data(), data.size()), static_cast<la_ssize_t>(data.size())) << name;
    for (const PackEntry& entry : entries) {
      if (name == pack::entry_member(entry.key, true)) {
        EXPECT_EQ(data, entry.binary);
      } else if (name == pack::entry_member(entry.key, false)) {
        EXPECT_EQ(nlohmann::json::parse(data), entry.sidecar);
      }
    }
    for (const PackInput& input : inputs) {
      if (name == pack::input_member(input.digest)) {
        EXPECT_EQ(data, input.bytes);
      }
    }
  }
  EXPECT_EQ(status, ARCHIVE_EOF) << archive_error_string(reader);
  archive_read_free(reader);
  EXPECT_EQ(names, expected);

  const fs::path listing = folder.path / "listing", unpacked = folder.path / "unpacked";
  fs::create_directories(unpacked);
  ASSERT_EQ(std::system(("tar tvf " + pack.string() + " > " + listing.string() + " && tar xf " + pack.string() +
                         " -C " + unpacked.string()).c_str()),
            0);
  std::ifstream in(listing);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), expected.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("-rw-r--r--", 0), 0u) << lines[i];
    EXPECT_EQ(lines[i].substr(lines[i].size() - expected[i].size()), expected[i]);
  }
  std::ifstream big(unpacked / pack::entry_member(entries[0].key, true), std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(big)), {}), entries[0].binary);
}

// write_pack reads the caller's entries in place: they are neither moved from nor reordered.
TEST_F(PackTest, TheWriterLeavesTheCallersEntriesAsTheyWere) {
  const std::vector<PackEntry> entries = make_entries(4);
  const std::vector<PackEntry> before = entries;
  write(entries);
  ASSERT_EQ(entries.size(), before.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].key, before[i].key);
    EXPECT_EQ(entries[i].binary, before[i].binary);
  }
}

TEST_F(PackTest, EmptyPackOpensAndMisses) {
  write({});
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->load(make_entry(0).key).status, LoadStatus::miss);
}

TEST_F(PackTest, OneFlippedByteRefusesThatEntryAndTheRestServe) {
  write(make_entries(10));
  const PackEntry victim = make_entry(4);
  std::uint64_t offset = 0;
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    for (std::size_t i = 0; i < reader->entry_count(); ++i) {
      if (reader->record(i).key == victim.key) offset = reader->record(i).binary_offset + 7;
    }
  }
  ASSERT_NE(offset, 0u);
  flip_byte(pack, offset);
  auto reader = open();
  ASSERT_TRUE(reader);
  LoadResult damaged = reader->load(victim.key);
  EXPECT_EQ(damaged.status, LoadStatus::corrupt);
  EXPECT_NE(damaged.reason.find("checksum"), std::string::npos) << damaged.reason;
  for (int i = 0; i < 10; ++i) {
    if (i != 4) {
      EXPECT_EQ(reader->load(make_entry(i).key).status, LoadStatus::hit) << i;
    }
  }
}

TEST_F(PackTest, DamagedIndexRecordRefusesOnlyItsEntry) {
  write(make_entries(5));
  // The first record's binary offset (record starts after the 96-byte header at file offset 512).
  flip_byte(pack, pack::kBlock + pack::kIndexHeaderSize + 16 + 2);
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->load(reader->record(0).key).status, LoadStatus::corrupt);
  EXPECT_EQ(reader->load(reader->record(1).key).status, LoadStatus::hit);
}

TEST_F(PackTest, TruncatedOrForeignFilesAreRefusedNotCrashed) {
  write(make_entries(5));
  std::uint64_t last_binary = 0;
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    last_binary = reader->record(reader->entry_count() - 1).binary_offset;
  }
  // Cut inside the last binary: that entry is refused, the others still serve their exact bytes.
  const std::vector<std::uint64_t> sizes = {last_binary + 5, 2000, 600, 10, 0};
  for (std::uint64_t size : sizes) {
    write(make_entries(5));
    fs::resize_file(pack, size);
    std::string error;
    auto reader = PackReader::open(pack, {}, &error);
    if (!reader) continue;  // refused whole: fine
    int hits = 0;
    for (int i = 0; i < 5; ++i) {
      LoadResult loaded = reader->load(make_entry(i).key);
      if (loaded.status == LoadStatus::hit) {
        EXPECT_EQ(loaded.binary, make_entry(i).binary);
        ++hits;
      }
    }
    EXPECT_EQ(hits, size == sizes[0] ? 4 : 0) << size;
  }
  std::ofstream(pack, std::ios::trunc) << std::string(4096, 'x');
  EXPECT_NE(refusal().find("not a jitcache pack"), std::string::npos);
}

// Every single-byte change anywhere in a small pack, signed or not: the pack is refused, or each
// entry is refused or served with exactly its own bytes. Never a wrong binary, never a crash.
TEST_F(PackTest, NoSingleByteChangeServesAWrongBinary) {
  auto [private_pem, public_pem] = make_key_pair();
  for (const std::string& key : {std::string(), private_pem}) {
    write(make_entries(3), key, make_inputs(2));
    const std::string original = [&] {
      std::ifstream in(pack, std::ios::binary);
      return std::string((std::istreambuf_iterator<char>(in)), {});
    }();
    int served = 0, refused = 0;
    const int fd = ::open(pack.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    for (std::size_t at = 0; at < original.size(); ++at) {
      const char damaged = static_cast<char>(original[at] ^ 0x5a);  // changed in place, then restored
      ASSERT_EQ(::pwrite(fd, &damaged, 1, static_cast<off_t>(at)), 1);
      std::string error;
      auto reader = PackReader::open(pack, {}, &error);
      if (!reader) ++refused;
      for (int i = 0; reader && i < 3; ++i) {
        const PackEntry expected = make_entry(i);
        LoadResult loaded = reader->load(expected.key);
        if (loaded.status == LoadStatus::hit) {
          ASSERT_EQ(loaded.binary, expected.binary) << "byte " << at;
          ++served;
        }
      }
      for (int i = 0; reader && i < 2; ++i) {
        const PackInput expected = make_input(i);
        LoadResult loaded = reader->load_input(expected.digest);
        if (loaded.status == LoadStatus::hit) {
          ASSERT_EQ(loaded.binary, expected.bytes) << "byte " << at;
        }
      }
      ASSERT_EQ(::pwrite(fd, &original[at], 1, static_cast<off_t>(at)), 1);
    }
    ::close(fd);
    EXPECT_GT(refused, 0);
    EXPECT_GT(served, 0);  // changes in padding and unused header fields harm nothing
  }
}

TEST_F(PackTest, ManifestChangeRefusesThePack) {
  write(make_entries(2));
  std::uint64_t manifest_offset = 0;
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    manifest_offset = reader->header().manifest_offset;
  }
  flip_byte(pack, manifest_offset + 3);
  EXPECT_NE(refusal().find("manifest"), std::string::npos);
}

TEST_F(PackTest, FilesOthersCanWriteAreRefused) {
  write(make_entries(1));
  ::chmod(pack.c_str(), 0666);
  EXPECT_NE(refusal().find(pack.string()), std::string::npos);
  ::chmod(pack.c_str(), 0644);
  fs::create_symlink(pack, folder.path / "link.jcpack");
  std::string error;
  EXPECT_FALSE(PackReader::open(folder.path / "link.jcpack", {}, &error));
}

TEST_F(PackTest, SignedByATrustedKeyIsServed) {
  auto [private_pem, public_pem] = make_key_pair();
  write(make_entries(3), private_pem);
  std::string error;
  PackTrust trust;
  trust.required = true;
  trust.trusted_keys.push_back(*pack::public_key_from_pem(public_pem, &error));
  auto reader = open(trust);
  ASSERT_TRUE(reader);
  ASSERT_TRUE(reader->signer());
  EXPECT_EQ(reader->load(make_entry(2).key).status, LoadStatus::hit);
}

TEST_F(PackTest, UntrustedKeyOrUnsignedIsRefusedWhenTrustIsRequired) {
  auto [producer_private, producer_public] = make_key_pair();
  auto [other_private, other_public] = make_key_pair();
  std::string error;
  PackTrust trust;
  trust.required = true;
  trust.trusted_keys.push_back(*pack::public_key_from_pem(other_public, &error));
  write(make_entries(3), producer_private);
  EXPECT_NE(refusal(trust).find("not a trusted pack key"), std::string::npos);
  EXPECT_TRUE(open());  // no trust required: a valid signature by anyone is fine
  write(make_entries(3));
  EXPECT_NE(refusal(trust).find("unsigned"), std::string::npos);
  PackTrust listed_but_unreadable;
  listed_but_unreadable.required = true;
  EXPECT_NE(refusal(listed_but_unreadable).find("unsigned"), std::string::npos);
}

TEST_F(PackTest, ChangedAfterSigningIsRefusedEvenWithoutRequiredTrust) {
  auto [private_pem, public_pem] = make_key_pair();
  write(make_entries(3), private_pem);
  flip_byte(pack, pack::kBlock + pack::kIndexHeaderSize + 20);  // a record's offset
  EXPECT_NE(refusal().find("signature does not verify"), std::string::npos);
}

TEST_F(PackTest, SigningLaterGivesTheSameEntriesAndAVerifiedSignature) {
  auto [private_pem, public_pem] = make_key_pair();
  write(make_entries(4));
  std::string error;
  ASSERT_TRUE(sign_pack(pack, private_pem, &error)) << error;
  PackTrust trust;
  trust.required = true;
  trust.trusted_keys.push_back(*pack::public_key_from_pem(public_pem, &error));
  auto reader = open(trust);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->load(make_entry(3).key).status, LoadStatus::hit);
}

// An unsigned pack's index holds XXH3-128 checksums (format version 2) and a lookup checks the
// binary against them: a flipped byte is refused by the index's checksum.
TEST_F(PackTest, AnUnsignedPackIsXxh3CheckedAndAFlippedBinaryByteIsRefused) {
  write(make_entries(3));
  const PackEntry victim = make_entry(1);
  const pack::IndexRecord record = record_of(victim.key);
  EXPECT_EQ(open()->header().version, 2u);
  EXPECT_EQ(open()->header().checksum_algorithm, pack::ChecksumAlgorithm::xxh3_128);
  EXPECT_EQ(record.binary_checksum, pack::checksum(pack::ChecksumAlgorithm::xxh3_128, victim.binary));
  flip_byte(pack, record.binary_offset + 3);
  auto reader = open();
  ASSERT_TRUE(reader);
  LoadResult damaged = reader->load(victim.key);
  EXPECT_EQ(damaged.status, LoadStatus::corrupt);
  EXPECT_EQ(damaged.reason, "entry " + victim.key.hex() + ": binary checksum mismatch");
  EXPECT_EQ(reader->load(make_entry(0).key).status, LoadStatus::hit);
}

// Version 1 packs (SHA-256, written by the first releases) are still read: the fuzz seed corpus
// holds three written by the version-1 writer, and a writer asked for SHA-256 writes version 1.
TEST_F(PackTest, Version1PacksAreStillRead) {
  for (const char* name : {"no_inputs.jcpack", "with_inputs.jcpack", "signed.jcpack"}) {
    const fs::path copy = folder.path / name;
    fs::copy_file(fs::path(PACK_CORPUS_DIR) / name, copy);
    fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    std::string error;
    auto reader = PackReader::open(copy, {}, &error);
    ASSERT_TRUE(reader) << name << ": " << error;
    EXPECT_EQ(reader->header().version, 1u) << name;
    EXPECT_EQ(reader->header().checksum_algorithm, pack::ChecksumAlgorithm::sha256) << name;
    ASSERT_GT(reader->entry_count(), 0u) << name;
    for (std::size_t i = 0; i < reader->entry_count(); ++i) {
      const pack::IndexRecord record = reader->record(i);
      LoadResult loaded = reader->load(record.key);
      EXPECT_EQ(loaded.status, LoadStatus::hit) << name << ": " << loaded.reason;
      EXPECT_EQ(pack::sha256(loaded.binary), record.binary_checksum) << name;
    }
  }
  PackWriteOptions options;
  options.unsigned_checksum = pack::ChecksumAlgorithm::sha256;
  std::string error;
  ASSERT_TRUE(write_pack(pack, make_entries(2), options, &error)) << error;
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->header().version, 1u);
  EXPECT_EQ(reader->index_bytes().substr(88, 8), std::string(8, '\0'));  // as version 1 reserved it
  EXPECT_EQ(reader->load(make_entry(1).key).status, LoadStatus::hit);
}

// Signing an XXH3-128 pack rewrites its checksums as SHA-256 (version 1) after checking every
// member; a damaged one is not signed; a signed index of XXH3 values is refused.
TEST_F(PackTest, SigningRewritesXxh3ChecksumsAsSha256AndASignedXxh3PackIsRefused) {
  auto [private_pem, public_pem] = make_key_pair();
  write(make_entries(3), "", make_inputs(2));
  std::string xxh3_index;
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    xxh3_index = reader->index_bytes();
  }
  std::string error;
  ASSERT_TRUE(sign_pack(pack, private_pem, &error)) << error;
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->signer());
    EXPECT_EQ(reader->header().version, 1u);
    EXPECT_EQ(reader->header().checksum_algorithm, pack::ChecksumAlgorithm::sha256);
    for (std::size_t i = 0; i < reader->entry_count(); ++i) {
      LoadResult loaded = reader->load_record(reader->record(i), /*full_check=*/true);
      ASSERT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
      EXPECT_EQ(pack::sha256(loaded.binary), reader->record(i).binary_checksum);
    }
    EXPECT_EQ(reader->load_input(make_input(1).digest).status, LoadStatus::hit);
  }
  // The XXH3 index signed as it is, written back: refused whole.
  std::optional<std::string> slot = pack::sign_slot(private_pem, pack::signed_message(xxh3_index), &error);
  ASSERT_TRUE(slot) << error;
  {
    std::fstream stream(pack, std::ios::in | std::ios::out | std::ios::binary);
    stream.seekp(static_cast<std::streamoff>(pack::kBlock));
    stream.write(xxh3_index.data(), static_cast<std::streamsize>(xxh3_index.size()));
    stream.seekp(static_cast<std::streamoff>(pack::signature_data_offset(xxh3_index.size())));
    stream.write(slot->data(), static_cast<std::streamsize>(slot->size()));
  }
  EXPECT_NE(refusal().find("checksums are not SHA-256"), std::string::npos);
  // A damaged XXH3 pack is not signed.
  write(make_entries(3));
  flip_byte(pack, record_of(make_entry(2).key).binary_offset);
  EXPECT_FALSE(sign_pack(pack, private_pem, &error));
  EXPECT_NE(error.find("not signed"), std::string::npos) << error;
}

// The writer refuses an entry whose sidecar does not describe its binary: readers of XXH3 and
// signed packs check the binary against the index only.
TEST_F(PackTest, TheWriterRefusesAnEntryWhoseSidecarDoesNotDescribeItsBinary) {
  std::vector<PackEntry> entries = make_entries(2);
  entries[1].binary += "!";
  std::string error;
  EXPECT_FALSE(write_pack(pack, entries, PackWriteOptions{}, &error));
  EXPECT_NE(error.find("does not describe its binary"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(pack));
}

TEST_F(PackTest, FolderOfPacksIsAskedInNameOrderAndRefusedEntriesFallThrough) {
  const fs::path packs = folder.path / "packs";
  fs::create_directory(packs);
  ::chmod(packs.c_str(), 0755);
  pack = packs / "a.jcpack";
  write(make_entries(3));
  pack = packs / "b.jcpack";
  write(make_entries(6));
  flip_byte(packs / "a.jcpack", 0);  // a's first member header: the whole pack a is refused
  std::vector<std::string> warnings;
  auto set = PackSet::open(packs.string() + ":" + (folder.path / "missing.jcpack").string(), {}, &warnings);
  ASSERT_EQ(set->packs().size(), 1u);
  EXPECT_EQ(warnings.size(), 2u);
  PackLookup found = set->load(make_entry(1).key);
  EXPECT_EQ(found.result.status, LoadStatus::hit);
  EXPECT_EQ(found.pack, packs / "b.jcpack");
  set->refuse(make_entry(1).key);
  EXPECT_EQ(set->load(make_entry(1).key).result.status, LoadStatus::miss);
}

// Issue 28.6: the whole index was read before the pack's signature or trust was looked at: a pack
// claiming 16.7 M records cost every app start 2 GB and seconds, even when refused. Here a sparse
// pack claims 8 M records (a 940 MB index, consistent with its file size) and is unsigned, while
// trust is required: it is refused with a few blocks read. And an index member longer than its
// header says is refused before it is read.
TEST_F(PackTest, APackRefusedForTrustOrSizeIsRefusedBeforeItsIndexIsRead) {
  write(make_entries(1));
  std::string original;
  {
    std::ifstream in(pack, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::uint64_t small_index = pack::parse_tar_header(original.substr(0, pack::kBlock))->size;
  const std::string slot_member =
      original.substr(pack::signature_header_offset(small_index), pack::kBlock + pack::kSignatureSlot);
  pack::IndexHeader header = *pack::decode_header(original.substr(pack::kBlock, pack::kIndexHeaderSize));
  auto write_claiming = [&](std::uint32_t entries, std::uint64_t member_size) {
    header.entry_count = entries;
    header.inputs_offset = header.inputs_size = 0;
    fs::remove(pack);
    std::ofstream out(pack, std::ios::binary);
    out << *pack::tar_header(pack::kIndexMember, member_size, 0) << pack::encode_header(header);
    out.seekp(static_cast<std::streamoff>(pack::signature_header_offset(member_size)));
    out << slot_member;
    out.close();
    fs::resize_file(pack, pack::signature_header_offset(member_size) + (std::uint64_t{entries} + 8) * 2 * pack::kBlock);
  };
  auto peak_kib = [] {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
  };
  const std::uint32_t claimed = 1u << 23;
  write_claiming(claimed, header.header_size + std::uint64_t{claimed} * header.record_size);
  PackTrust trust;
  trust.required = true;
  const long before = peak_kib();
  EXPECT_NE(refusal(trust).find("unsigned"), std::string::npos);
  write_claiming(1, 800u << 20);
  EXPECT_NE(refusal().find("index header out of bounds"), std::string::npos);
  EXPECT_LT(peak_kib() - before, 64 * 1024) << "KiB more at the peak: the claimed index was read";
}

// Issue 28.7: `pack verify` said ok for members named `../x` or `/x`, or symlinks, that the index
// never names: the reader never sees them, but `tar xf` (which the docs suggest) writes them.
TEST_F(PackTest, MembersOutsideThePacksLayoutAreReportedByVerify) {
  write(make_entries(2));
  {
    auto reader = open();
    ASSERT_TRUE(reader);
    EXPECT_EQ(pack::member_problems(*reader), std::vector<std::string>{});
  }
  std::string bytes;
  {
    std::ifstream in(pack, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::uint64_t end = 0;  // the end-of-archive marker: the first all-zero block
  while (bytes.substr(end, pack::kBlock) != std::string(pack::kBlock, '\0')) {
    end += pack::kBlock + pack::padded(pack::parse_tar_header(bytes.substr(end, pack::kBlock))->size);
  }
  auto with_type = [](std::string header, char type) {  // and its checksum made again
    header[156] = type;
    std::fill(header.begin() + 148, header.begin() + 156, ' ');
    unsigned sum = 0;
    for (char c : header) sum += static_cast<unsigned char>(c);
    std::snprintf(header.data() + 148, 8, "%06o", sum);
    header[155] = ' ';
    return header;
  };
  const std::string payload = "planted";
  std::string planted = *pack::tar_header("../outside", payload.size(), 0) + payload;
  planted.resize(pack::kBlock * 2, '\0');
  planted += *pack::tar_header("/etc/planted", 0, 0);
  planted += with_type(*pack::tar_header("entries/link", 0, 0), '2');
  bytes = bytes.substr(0, end) + planted + std::string(pack::kBlock * 2, '\0');
  {
    std::ofstream out(pack, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  auto reader = open();  // the reader goes by the index: it still opens and serves
  ASSERT_TRUE(reader);
  const std::vector<std::string> problems = pack::member_problems(*reader);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("'../outside'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("outside the folder"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("'/etc/planted'"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("not a regular file"), std::string::npos) << problems[2];
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

TEST_F(PackTest, InputsAreCarriedOncePerDigestAndFoundByIt) {
  write(make_entries(3), "", make_inputs(3));
  auto reader = open();
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->input_count(), 3u);
  EXPECT_EQ(reader->manifest().value("inputs", false), true);
  EXPECT_EQ(reader->manifest().value("input_records", 0), 3);
  for (int i = 0; i < 3; ++i) {
    const PackInput expected = make_input(i);
    LoadResult loaded = reader->load_input(expected.digest);
    ASSERT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
    EXPECT_EQ(loaded.binary, expected.bytes);
    std::string why;
    EXPECT_TRUE(decode_recorded_inputs(loaded.binary, &why)) << why;
  }
  EXPECT_EQ(reader->load_input(xxh3_128("no such record")).status, LoadStatus::miss);
  EXPECT_EQ(reader->load(make_entry(1).key).status, LoadStatus::hit);  // entries unchanged by the table
  const std::string listing = "tar tf " + pack.string() + " | grep -c '^inputs/.*\\.rec$' > " + (folder.path / "n").string();
  ASSERT_EQ(std::system(listing.c_str()), 0);
  std::ifstream in(folder.path / "n");
  int members = 0;
  in >> members;
  EXPECT_EQ(members, 3);

  std::string error;  // the same record twice, or one that is not what its digest says, is not written
  std::vector<PackInput> twice = {make_input(0), make_input(0)};
  EXPECT_FALSE(write_pack(folder.path / "twice.jcpack", {}, twice, {}, &error));
  PackInput lying = make_input(1);
  lying.digest = make_input(2).digest;
  EXPECT_FALSE(write_pack(folder.path / "lying.jcpack", {}, {lying}, {}, &error));
}

TEST_F(PackTest, ADamagedInputsRecordIsRefusedAloneAndTheRestServe) {
  write(make_entries(2), "", make_inputs(3));
  auto reader = open();
  ASSERT_TRUE(reader);
  const pack::InputIndexRecord damaged = reader->input_record(1);
  reader.reset();
  flip_byte(pack, damaged.offset + 3);
  reader = open();
  ASSERT_TRUE(reader);
  LoadResult loaded = reader->load_input(damaged.digest);
  EXPECT_EQ(loaded.status, LoadStatus::corrupt);
  EXPECT_NE(loaded.reason.find("checksum mismatch"), std::string::npos) << loaded.reason;
  int served = 0;
  for (int i = 0; i < 3; ++i) served += reader->load_input(make_input(i).digest).status == LoadStatus::hit;
  EXPECT_EQ(served, 2);
  EXPECT_EQ(reader->load(make_entry(0).key).status, LoadStatus::hit);
}

TEST_F(PackTest, TheSignatureCoversTheInputsTable) {
  auto [private_pem, public_pem] = make_key_pair();
  write(make_entries(2), private_pem, make_inputs(2));
  ASSERT_TRUE(open());
  // The second row's SHA-256: inside the index member, after the header and the entry records.
  flip_byte(pack, pack::kBlock + pack::kIndexHeaderSize + 2 * pack::kRecordSize + pack::kInputRecordSize + 40);
  EXPECT_NE(refusal().find("signature does not verify"), std::string::npos);
}

// A key written twice in an unsigned index: lookups served the first row's entry while
// `pack import` kept the last, and only `pack verify` said the index was wrong. Every reader
// refuses it now, as verify does.
TEST_F(PackTest, AnIndexNamingAKeyTwiceRefusesThePack) {
  write(make_entries(3));
  const Digest128 first = open()->record(0).key;
  std::string key_bytes(16, '\0');
  {
    std::ifstream in(pack, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(pack::kBlock + pack::kIndexHeaderSize));
    in.read(key_bytes.data(), 16);
  }
  {
    std::fstream out(pack, std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(static_cast<std::streamoff>(pack::kBlock + pack::kIndexHeaderSize + pack::kRecordSize));
    out.write(key_bytes.data(), 16);
  }
  EXPECT_NE(refusal().find("index not sorted at " + first.hex()), std::string::npos) << refusal();
}

TEST_F(PackTest, AnInputsTableOutsideTheIndexRefusesThePack) {
  write(make_entries(2), "", make_inputs(2));
  flip_byte(pack, pack::kBlock + 72);  // the table's offset in the index header
  EXPECT_NE(refusal().find("inputs table out of bounds"), std::string::npos);
}

}  // namespace
}  // namespace jitcache

namespace jitcache {
namespace {

TEST(PackSidecar, OnlyTheNamedTopLevelValuesAreKeptAndAnythingOddIsParsedWhole) {
  using pack::only_top_level_values;
  const std::string text =
      R"({"answers":{"components":[1]},"components":{"input":{"text":"a \"}\" b","v":[1,{"x":2}]}},"key":"k"})";
  const std::optional<std::string> light = only_top_level_values(text, {"answers", "key"});
  ASSERT_TRUE(light);
  const nlohmann::json parsed = nlohmann::json::parse(*light);
  EXPECT_FALSE(parsed.contains("components"));
  EXPECT_EQ(parsed["answers"]["components"][0], 1);  // the same name deeper down is not touched
  EXPECT_EQ(parsed["key"], "k");
  EXPECT_EQ(only_top_level_values(R"({ "components" : 5 , "key" : "k" })", {"key"}), R"({"key" : "k"})");
  EXPECT_EQ(only_top_level_values(R"({"key":"components"})", {"components"}), "{}");  // a value, not a key
  EXPECT_EQ(only_top_level_values("{ }", {"key"}), "{}");
  // Escapes: a quote after an even run of backslashes ends the string, after an odd run it does not.
  EXPECT_EQ(only_top_level_values(R"({"c":"x\\","key":"k"})", {"key"}), R"({"key":"k"})");
  EXPECT_EQ(only_top_level_values(R"({"c":"x\\\"y\\\\","key":"k"})", {"key"}), R"({"key":"k"})");
  EXPECT_EQ(only_top_level_values(R"({"c":"\"key\":1","key":"k"})", {"key"}), R"({"key":"k"})");
  EXPECT_FALSE(only_top_level_values(R"({"key":"k\"})", {"key"}));  // never closed
  EXPECT_FALSE(only_top_level_values(R"({"key":"a","key":"b"})", {"key"}));  // twice: parsed whole
  EXPECT_FALSE(only_top_level_values(R"({"components":{"open":[)", {"key"}));
  EXPECT_FALSE(only_top_level_values(R"({"components":"unterminated)", {"key"}));
  EXPECT_FALSE(only_top_level_values(R"({"key":"k"} trailing)", {"key"}));
  EXPECT_FALSE(only_top_level_values(R"([{"key":1}])", {"key"}));
  EXPECT_FALSE(only_top_level_values("", {"key"}));
}

// Random documents whose values nest objects and arrays of strings full of quotes, backslashes and
// brackets (escaped by the dump), of every length, so that each of them lands on every offset of
// the scanner's 64-byte blocks and on their edges: what is kept must be what the parser reads.
nlohmann::json random_value(std::mt19937_64& random, int depth) {
  static const std::string alphabet = "\"\\{}[]:, a\n";
  const int kind = depth >= 4 ? 0 : static_cast<int>(random() % 4);
  if (kind == 0) {
    std::string text(random() % 40, ' ');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    return text;
  }
  if (kind == 1) return static_cast<std::uint64_t>(random() % 1000);
  nlohmann::json container = kind == 2 ? nlohmann::json::object() : nlohmann::json::array();
  for (std::uint64_t i = random() % 5; i > 0; --i) {
    if (kind == 2) container[std::string(1, "k{\"\\"[random() % 4]) + std::to_string(i)] = random_value(random, depth + 1);
    else container.push_back(random_value(random, depth + 1));
  }
  return container;
}

TEST(PackSidecar, TheKeptTopLevelValuesAreWhatTheParserReadsInRandomDocuments) {
  std::mt19937_64 random(3);
  for (int round = 0; round < 3000; ++round) {
    nlohmann::json document = nlohmann::json::object();
    for (int field = 0; field < 6; ++field) document["f" + std::to_string(field)] = random_value(random, 0);
    const std::string text = document.dump(round % 3 == 0 ? 1 : -1);
    const std::vector<std::string_view> names = {"f1", "f4", "absent"};
    const std::optional<std::string> light = pack::only_top_level_values(text, names);
    ASSERT_TRUE(light) << text;
    const nlohmann::json expected = {{"f1", document["f1"]}, {"f4", document["f4"]}};
    ASSERT_EQ(nlohmann::json::parse(*light), expected) << text;
    const std::optional<pack::HitFields> tree = pack::hit_fields(text, names, "f2");
    ASSERT_TRUE(tree && tree->as_text) << text;
    ASSERT_EQ(tree->fields, expected) << text;
    ASSERT_EQ(nlohmann::json::parse(*tree->as_text), document["f2"]) << text;
  }
}

// The answers' text is passed on as written (whitespace inside kept), left out of the fields.
TEST(PackSidecar, TheAnswersAreSplitOffAsTheirText) {
  const std::string text = R"({"answers" : { "k" : [1, "}"] } , "key":"k","components":{}})";
  std::optional<pack::HitFields> split = pack::hit_fields(text, {"key"}, "answers");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->fields, nlohmann::json({{"key", "k"}}));
  ASSERT_TRUE(split->as_text);
  EXPECT_EQ(*split->as_text, R"({ "k" : [1, "}"] })");
  split = pack::hit_fields(R"({"key":"k"})", {"key"}, "answers");
  ASSERT_TRUE(split);
  EXPECT_FALSE(split->as_text);  // none: an entry written before answers were recorded
  EXPECT_FALSE(pack::hit_fields(R"({"answers":1,"answers":2})", {"key"}, "answers"));  // twice
}

// The kept values are what the parser makes of them, whether read directly (plain strings,
// unsigned integers) or parsed; one that is not JSON makes the fields discarded, as a whole parse
// would refuse the sidecar; a name with an escape leaves the whole text to the parser.
TEST(PackSidecar, KeptValuesAreReadAsTheParserReadsThem) {
  const std::vector<std::string> values = {R"("plain")", R"("with \"escapes\" \n")", R"("caf\u00e9")", "0", "7",
                                           "18446744073709551615", "18446744073709551616", "-3", "1.5", "1e3",
                                           "true", "null", R"({"a":[1,2]})", "[]"};
  for (const std::string& value : values) {
    const std::string text = R"({"components":{},"key":)" + value + "}";
    std::optional<pack::HitFields> split = pack::hit_fields(text, {"key"}, "answers");
    ASSERT_TRUE(split) << value;
    EXPECT_EQ(split->fields, nlohmann::json({{"key", nlohmann::json::parse(value)}})) << value;
  }
  for (const char* bad : {"01", "\"tab\there\"", "tru", "[1,]"}) {
    std::optional<pack::HitFields> split = pack::hit_fields(std::string(R"({"key":)") + bad + "}", {"key"}, "answers");
    ASSERT_TRUE(split) << bad;
    EXPECT_TRUE(split->fields.is_discarded()) << bad;
  }
  EXPECT_FALSE(pack::hit_fields(R"({"key":"a","key":"b"})", {"key"}, "answers"));
  std::optional<pack::HitFields> disk = pack::all_but(R"({"components":{"x":1},"key":"k","n":2})", "components", "answers");
  ASSERT_TRUE(disk);
  EXPECT_EQ(disk->fields, nlohmann::json({{"components", nullptr}, {"key", "k"}, {"n", 2}}));
}

// A hit parses only the fields a hit reads (pack::kHitFields); the tools get the sidecar whole.
TEST_F(PackTest, AHitParsesOnlyTheFieldsAHitReadsAndTheToolsGetThemAll) {
  std::vector<PackEntry> entries = make_entries(2);
  for (PackEntry& entry : entries) {
    entry.sidecar["components"] = {{"input", {{"digest", "00"}, {"value", {{"text", "__kernel void k() {}"}}}}}};
    entry.sidecar["answers"] = {{"kernels", {{"k", {{"attributes", ""}}}}}};
    entry.sidecar["build_log"] = "warning: x";
    entry.sidecar["compile_time_us"] = 1234;
    entry.sidecar["captured_after_use"] = true;
  }
  write(entries);
  auto reader = open();
  ASSERT_TRUE(reader);
  LoadResult hit = reader->load(entries[0].key);
  ASSERT_EQ(hit.status, LoadStatus::hit) << hit.reason;
  nlohmann::json expected = nlohmann::json::object();
  for (std::string_view name : pack::kHitFields) expected[std::string(name)] = entries[0].sidecar[std::string(name)];
  EXPECT_EQ(hit.sidecar, expected);  // no components, device, kernel_names, answers
  EXPECT_EQ(hit.binary, entries[0].binary);
  // The answers come as their text, for the adapter to decode.
  ASSERT_TRUE(hit.answers);
  EXPECT_EQ(*hit.answers, entries[0].sidecar["answers"].dump());
  LoadResult whole = reader->load(entries[0].key, /*whole_sidecar=*/true);
  EXPECT_EQ(whole.sidecar, entries[0].sidecar);
  EXPECT_FALSE(whole.answers);
  EXPECT_EQ(reader->load_record(reader->record(0)).sidecar["components"].is_object(), true);
}

}  // namespace
}  // namespace jitcache

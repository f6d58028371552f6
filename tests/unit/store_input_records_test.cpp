// Recorded inputs (store_inputs): the record format read back as hostile input, and the store's
// content-addressed records: deduplicated, counted in the size record, removed once no entry
// names them (eviction, clear), checked against their name on load.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hashing/recorded_inputs.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

struct TempRoot {
  fs::path path;
  TempRoot() {
    char name[] = "/tmp/jitcache-inputs-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempRoot() { fs::remove_all(path); }
};

RecordedInputs sample() {
  RecordedInputs inputs;
  inputs.kind = ProgramKind::source;
  inputs.input = "#include \"common.h\"\n__kernel void k(__global int* x) { x[0] = ONE; }\n";
  inputs.options = "-I /tmp/include -DX=1";
  inputs.working_dir = "/work";
  inputs.headers.push_back({"common.h", "/tmp/include/common.h", true, "#define ONE 1\n"});
  inputs.headers.push_back({"missing.h", "", false, ""});
  inputs.spec_constants.push_back({7, std::string("\x01\x00\x00\x00", 4)});
  inputs.environment.push_back({"POCL_WORK_GROUP_METHOD", "cbs"});
  return inputs;
}

TEST(RecordedInputsFormat, RoundTripsEveryField) {
  const RecordedInputs inputs = sample();
  std::string why;
  std::optional<RecordedInputs> back = decode_recorded_inputs(encode_recorded_inputs(inputs), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->input, inputs.input);
  EXPECT_EQ(back->options, inputs.options);
  EXPECT_EQ(back->working_dir, inputs.working_dir);
  ASSERT_EQ(back->headers.size(), 2u);
  EXPECT_EQ(back->headers[0].contents, "#define ONE 1\n");
  EXPECT_TRUE(back->headers[0].found);
  EXPECT_FALSE(back->headers[1].found);
  ASSERT_EQ(back->spec_constants.size(), 1u);
  EXPECT_EQ(back->spec_constants[0].id, 7u);
  EXPECT_EQ(back->spec_constants[0].value, std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(back->environment, inputs.environment);
}

TEST(RecordedInputsFormat, RefusesEveryTruncationAndTrailingBytes) {
  const std::string bytes = encode_recorded_inputs(sample());
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    std::string why;
    EXPECT_FALSE(decode_recorded_inputs(bytes.substr(0, size), &why)) << size;
    EXPECT_FALSE(why.empty());
  }
  std::string why;
  EXPECT_FALSE(decode_recorded_inputs(bytes + "x", &why));
}

TEST(RecordedInputsFormat, RefusesHugeLengthsWithoutAllocatingThem) {
  std::string bytes = encode_recorded_inputs(sample());
  // The api field's length prefix right after the magic: claim 2^62 bytes.
  for (int i = 0; i < 8; ++i) bytes[8 + i] = i == 7 ? '\x40' : '\0';
  std::string why;
  EXPECT_FALSE(decode_recorded_inputs(bytes, &why));
}

TEST(RecordedInputsFormat, RecordingRefusesAHeaderThatChangedSinceItWasHashed) {
  TempRoot tmp;
  const fs::path header = tmp.path / "common.h";
  std::ofstream(header) << "#define ONE 1\n";
  ProgramInputs program;
  program.input = "#include \"common.h\"\n";
  program.headers.push_back({"common.h", header.string(), true, xxh3_128("#define ONE 1\n")});
  std::string why;
  ASSERT_TRUE(record_inputs(program, tmp.path.string(), &why)) << why;
  std::ofstream(header) << "#define ONE 2\n";
  EXPECT_FALSE(record_inputs(program, tmp.path.string(), &why));
  EXPECT_NE(why.find("changed"), std::string::npos) << why;
}

struct Store {
  TempRoot tmp;
  std::unique_ptr<DiskStore> store;
  explicit Store(std::uint64_t max_size = 1ull << 30) {
    StoreLimits limits;
    limits.max_size = max_size;
    std::string error;
    store = DiskStore::open(tmp.path / "cache", limits, &error);
  }
  fs::path root() const { return tmp.path / "cache"; }
};

TEST(StoreInputRecords, SavedOnceCountedInTheSizeAndCheckedOnLoad) {
  Store s;
  ASSERT_TRUE(s.store);
  const std::string record = encode_recorded_inputs(sample());
  Digest128 first, second;
  ASSERT_EQ(s.store->save_inputs(record, &first).status, SaveStatus::stored);
  ASSERT_EQ(s.store->save_inputs(record, &second).status, SaveStatus::stored);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, xxh3_128(record));
  EXPECT_EQ(s.store->size().bytes, record.size());  // once, however often saved
  EXPECT_EQ(s.store->rescan_size().bytes, record.size());
  EXPECT_EQ(s.store->size().entries, 0u);
  const fs::path file = s.root() / "inputs" / first.hex().substr(0, 2) / (first.hex() + ".rec");
  EXPECT_EQ((fs::status(file).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);

  LoadResult loaded = s.store->load_inputs(first);
  ASSERT_EQ(loaded.status, LoadStatus::hit);
  EXPECT_EQ(loaded.binary, record);

  std::ofstream(file, std::ios::binary | std::ios::trunc) << record.substr(0, record.size() - 1) << "?";
  EXPECT_EQ(s.store->load_inputs(first).status, LoadStatus::corrupt);
  EXPECT_EQ(s.store->load_inputs(xxh3_128("absent")).status, LoadStatus::miss);
}

TEST(StoreInputRecords, RefusesASymlinkedRecord) {
  Store s;
  const std::string record = encode_recorded_inputs(sample());
  Digest128 digest;
  ASSERT_EQ(s.store->save_inputs(record, &digest).status, SaveStatus::stored);
  const fs::path file = s.root() / "inputs" / digest.hex().substr(0, 2) / (digest.hex() + ".rec");
  const fs::path elsewhere = s.tmp.path / "planted";
  std::ofstream(elsewhere, std::ios::binary) << record;
  fs::remove(file);
  fs::create_symlink(elsewhere, file);
  EXPECT_NE(s.store->load_inputs(digest).status, LoadStatus::hit);
}

TEST(StoreInputRecords, RemovedWhenNoEntryNamesThemAnyMore) {
  Store s;
  const std::string record = encode_recorded_inputs(sample());
  Digest128 digest;
  ASSERT_EQ(s.store->save_inputs(record, &digest).status, SaveStatus::stored);
  const Digest128 key{1, 2};
  ASSERT_EQ(s.store->save(key, std::string(1000, 'b'), {{"inputs", digest.hex()}}).status, SaveStatus::stored);
  const fs::path file = s.root() / "inputs" / digest.hex().substr(0, 2) / (digest.hex() + ".rec");
  // Old enough that only its name keeps it.
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(file, old);

  s.store->evict(UINT64_MAX, 0);  // a maintenance pass that evicts nothing: the entry names it
  EXPECT_TRUE(fs::exists(file));

  s.store->evict(0, 0);  // evicts the entry, then the record nobody names
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(s.store->size().bytes, 0u);
  EXPECT_EQ(s.store->rescan_size().bytes, 0u);
}

TEST(StoreInputRecords, AYoungUnnamedRecordSurvivesEvictionItsEntryMayBeOnItsWay) {
  Store s;
  Digest128 digest;
  ASSERT_EQ(s.store->save_inputs(encode_recorded_inputs(sample()), &digest).status, SaveStatus::stored);
  s.store->evict(0, 0);
  EXPECT_EQ(s.store->load_inputs(digest).status, LoadStatus::hit);
}

TEST(StoreInputRecords, ClearRemovesThemAll) {
  Store s;
  Digest128 digest;
  ASSERT_EQ(s.store->save_inputs(encode_recorded_inputs(sample()), &digest).status, SaveStatus::stored);
  s.store->clear();
  EXPECT_EQ(s.store->load_inputs(digest).status, LoadStatus::miss);
  EXPECT_EQ(s.store->size().bytes, 0u);
}

}  // namespace
}  // namespace jitcache

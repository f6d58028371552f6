// Store v2's per-shard parts: the shard size records (exact, recovered shard by shard), the bounded
// automatic eviction and maintenance passes, and the listing index (a cache of the entries: lost,
// stale, damaged or another user's index is rebuilt, never trusted over the entries).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "hashing/digest.hpp"
#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/shard_index.hpp"
#include "store/local/shard_records.hpp"
#include "store/local/size_ledger.hpp"
#include "tests/unit/store_entry_files.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSecond = 1000000000;

// The n-th key in level-1 shard `shard`.
Digest128 key_in(int shard, std::uint64_t n) {
  return Digest128{(static_cast<std::uint64_t>(shard) << 56) | ((n + 1) * 0x9e3779b97f4a7ull & 0x00ffffffffffffffull), n};
}

std::string binary_of(std::uint64_t n) { return std::string(300 + n % 7, static_cast<char>('a' + n % 26)); }

std::string read_text(const fs::path& path) { return store_test::read_bytes(path); }

class StoreShards : public ::testing::Test {
 protected:
  fs::path scratch, root;
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "jitcache-shards-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    scratch = pattern;
    root = scratch / "cache";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
  }
  std::unique_ptr<DiskStore> open_store(StoreLimits limits = {}) {
    std::string error;
    auto store = DiskStore::open(root, limits, &error);
    EXPECT_TRUE(store) << error;
    return store;
  }
  // To fill a store before a test opens it with the limits it tests.
  std::unique_ptr<DiskStore> open_unlimited_store() {
    StoreLimits unlimited;
    unlimited.max_size = 0;
    return open_store(unlimited);
  }
  void save(DiskStore& store, const Digest128& key, std::int64_t mtime_ns = 0) {
    ASSERT_EQ(store.save(key, binary_of(key.low), {{"api", "opencl"}, {"device", "dev " + std::to_string(key.low)}}).status,
              SaveStatus::stored);
    if (mtime_ns != 0) {
      ASSERT_FALSE(fileops::set_mtime(entry_file(key), mtime_ns));
    }
  }
  fs::path entry_file(const Digest128& key) const { return store_test::entry_name(root, key, ".entry"); }
  fs::path slot_file(int slot) const { return root / "shards" / store_detail::shard_name(slot); }
  std::string slot_text(int slot) const { return read_text(slot_file(slot)); }
  std::optional<store_detail::ShardRecord> slot(int index) const {
    return store_detail::parse_shard_record(index, slot_text(index));
  }
  void write_slot(int index, const store_detail::ShardRecord& record) const {
    store_test::write_private(slot_file(index), store_detail::format_shard_record(index, record));
  }
  // As a holder that died mid-change leaves it.
  void mark_size_record_dirty() const {
    std::string record = read_text(root / "size");
    record.replace(record.find("clean"), 5, "dirty");
    store_test::write_private(root / "size", record);
  }
  // Entries and bytes of one shard, counted from the files.
  SizeInfo count_shard(int shard) const {
    SizeInfo totals;
    const fs::path dir = root / store_detail::shard_name(shard);
    if (!fs::exists(dir)) return totals;
    for (const auto& file : fs::recursive_directory_iterator(dir)) {
      if (file.path().extension() != ".entry") continue;
      totals.entries += 1;
      totals.bytes += fs::file_size(file.path());
    }
    return totals;
  }
  std::set<Digest128> keys_of(const std::vector<EntryInfo>& entries) const {
    std::set<Digest128> keys;
    for (const auto& entry : entries) keys.insert(entry.key);
    return keys;
  }
};

// ---------------------------------------------------------------------------------------------
// Shard records

TEST_F(StoreShards, EverySlotCountsItsShardAndTheSlotsAddUpToTheSizeRecord) {
  auto store = open_store();
  for (int shard : {0x00, 0x17, 0xff}) {
    for (std::uint64_t n = 0; n < 3 + static_cast<std::uint64_t>(shard % 5); ++n) save(*store, key_in(shard, n));
  }
  ASSERT_TRUE(store->remove(key_in(0x17, 0)));
  SizeInfo sum;
  for (int shard : {0x00, 0x17, 0xff}) {
    const auto record = slot(shard);
    ASSERT_TRUE(record) << slot_text(shard);
    EXPECT_FALSE(record->dirty);
    EXPECT_EQ(record->totals.bytes, count_shard(shard).bytes) << shard;
    EXPECT_EQ(record->totals.entries, count_shard(shard).entries) << shard;
    sum.bytes += record->totals.bytes;
    sum.entries += record->totals.entries;
  }
  EXPECT_EQ(store->size().bytes, sum.bytes);
  EXPECT_EQ(store->size().entries, sum.entries);
}

// A holder that died mid-change leaves the size record and its shard's slot dirty: the next
// holder recounts that shard only and adds the other slots as they are. Shown by a clean slot
// whose numbers were made wrong by hand: a full scan would have corrected it, the recovery keeps it.
TEST_F(StoreShards, ADirtySizeRecordIsRecoveredFromTheSlotsRecountingOnlyDirtyShards) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 4; ++n) save(*store, key_in(0x10, n));
  for (std::uint64_t n = 0; n < 4; ++n) save(*store, key_in(0x20, n));
  const SizeInfo truth = store->size();
  const store_detail::ShardRecord ten = *slot(0x10), twenty = *slot(0x20);

  write_slot(0x10, {{1, 1}, ten.generation + 1, /*dirty=*/true});     // died while changing shard 10
  write_slot(0x20, {{twenty.totals.bytes + 1000, twenty.totals.entries}, twenty.generation, false});
  mark_size_record_dirty();

  const SizeInfo recovered = store->size();
  EXPECT_EQ(recovered.entries, truth.entries);
  EXPECT_EQ(recovered.bytes, truth.bytes + 1000) << "the clean slot was taken as it is, not rescanned";
  EXPECT_EQ(slot(0x10)->totals.bytes, count_shard(0x10).bytes) << "the dirty slot was recounted";
  EXPECT_FALSE(slot(0x10)->dirty);
  EXPECT_EQ(store->rescan_size().bytes, truth.bytes);  // a full count puts everything right
  EXPECT_EQ(slot(0x20)->totals.bytes, twenty.totals.bytes);
}

// A store written before the shard records existed (or with them lost or damaged): a record is
// counted when first needed, and a save's change then lands on a counted one.
TEST_F(StoreShards, MissingOrGarbledShardRecordsAreCountedAgain) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) save(*store, key_in(0x42, n));
  fs::remove_all(root / "shards");
  save(*store, key_in(0x42, 3));
  EXPECT_EQ(slot(0x42)->totals.entries, 4u);
  // A garbled record (longer than one, too) while the size record is dirty: that shard is counted.
  store_test::write_private(slot_file(0x42), std::string(200, 'x'));
  mark_size_record_dirty();
  EXPECT_EQ(store->size().entries, 4u);
  EXPECT_EQ(slot(0x42)->totals.bytes, count_shard(0x42).bytes);
  EXPECT_EQ(fs::file_size(slot_file(0x42)), store_detail::kShardRecordLength);
  // A lost size record: everything is counted again, every record rewritten.
  store_test::write_private(slot_file(0x42), store_detail::format_shard_record(0x42, {{1, 1}, 7, false}));
  fs::remove(root / "size");
  EXPECT_EQ(store->size().entries, 4u);
  EXPECT_EQ(slot(0x42)->totals.entries, 4u);
}

TEST_F(StoreShards, EveryChangeToAShardBumpsItsGeneration) {
  auto store = open_store();
  save(*store, key_in(0x33, 0));
  const std::uint64_t before = slot(0x33)->generation;
  const std::uint64_t other = slot(0x34) ? slot(0x34)->generation : 0;
  save(*store, key_in(0x33, 1));
  EXPECT_GT(slot(0x33)->generation, before);
  ASSERT_TRUE(store->remove(key_in(0x33, 1)));
  EXPECT_GT(slot(0x33)->generation, before + 1);
  EXPECT_EQ(slot(0x34) ? slot(0x34)->generation : 0, other) << "another shard's generation stays";
}

// ---------------------------------------------------------------------------------------------
// Bounded passes

// Over the limit, an automatic pass scans the fullest shards only (here one shard holds more than
// a pass's budget): it evicts there even though older entries sit in other shards, which a pass
// never scanned. `evict` (the tool) looks at everything and takes the oldest.
TEST_F(StoreShards, AnAutomaticPassScansOnlyTheFullestShards) {
  const std::int64_t now = fileops::now_ns();
  auto setup = open_unlimited_store();
  for (std::uint64_t n = 0; n < 10; ++n) save(*setup, key_in(0x80, n), now - static_cast<std::int64_t>(n) * kSecond);
  for (int shard = 0; shard < 20; ++shard) save(*setup, key_in(shard, 100), now - 3600 * kSecond);  // the oldest
  const SizeInfo full = setup->size();

  StoreLimits limits;
  limits.max_size = full.bytes + 100;  // the next save goes over
  limits.low_water = 0.9;
  limits.pass_entries = 10;  // shard 80 whole
  auto store = open_store(limits);
  save(*store, key_in(0x81, 0));
  EXPECT_LE(store->size().bytes, limits.max_size);
  for (int shard = 0; shard < 20; ++shard) {  // (not loaded: a hit would make them young)
    EXPECT_TRUE(fs::exists(entry_file(key_in(shard, 100)))) << "shard " << shard << " was not scanned";
  }
  EXPECT_LT(count_shard(0x80).entries, 10u) << "the fullest shard paid";

  EXPECT_GT(store->evict(store->size().bytes - 4000, 0).removed_entries, 0u);
  EXPECT_FALSE(fs::exists(entry_file(key_in(0, 100)))) << "evict takes the oldest anywhere";
}

// A pass that cannot reach the low-water mark within its shards cleans them down to the low-water
// mark of their own bytes, least recently used first: it never empties them (the entries used just
// now among them stay).
TEST_F(StoreShards, ABoundedPassCleansItsShardsToTheirOwnLowWaterNotToEmpty) {
  const std::int64_t now = fileops::now_ns();
  auto setup = open_unlimited_store();
  for (std::uint64_t n = 0; n < 20; ++n) save(*setup, key_in(0x90, n), now - static_cast<std::int64_t>(20 - n) * kSecond);
  for (int shard = 0; shard < 6; ++shard) save(*setup, key_in(shard, 50), now - 3600 * kSecond);
  StoreLimits limits;
  limits.max_size = setup->size().bytes;  // the next save goes over
  limits.low_water = 0.5;                 // the store's half: more than shard 90 holds
  limits.pass_entries = 20;               // shard 90 whole
  auto store = open_store(limits);
  save(*store, key_in(0x91, 0));
  const std::uint64_t left = count_shard(0x90).entries;
  EXPECT_GE(left, 9u) << "about half of the shard's bytes stay";
  EXPECT_LT(left, 20u);
  for (std::uint64_t n = 12; n < 20; ++n) EXPECT_TRUE(fs::exists(entry_file(key_in(0x90, n)))) << "recent " << n;
  EXPECT_FALSE(fs::exists(entry_file(key_in(0x90, 0)))) << "the oldest of the shard goes first";
}

// A shard alone bigger than the budget (a big store) is scanned in part: its level-2 folders from
// one of them on until they held `pass_entries` entries; the pass removes the least recently used
// fifth of what it scanned, not a fifth of the shard.
TEST_F(StoreShards, ABoundedPassScansPartOfAShardBiggerThanItsBudget) {
  const std::int64_t now = fileops::now_ns();
  auto setup = open_unlimited_store();
  for (std::uint64_t n = 0; n < 200; ++n) save(*setup, key_in(0x42, n), now - static_cast<std::int64_t>(n) * kSecond);
  StoreLimits limits;
  limits.max_size = setup->size().bytes;  // the next save goes over
  limits.pass_entries = 10;
  auto store = open_store(limits);
  save(*store, key_in(0x43, 0));
  const std::uint64_t removed = 200 - count_shard(0x42).entries;
  EXPECT_GE(removed, 1u);
  EXPECT_LE(removed, 8u) << "a whole-shard pass would remove 40";
  EXPECT_LE(store->size().bytes, limits.max_size);
}

// The periodic pass (age limit) takes turns over the shards: each pass covers shards from where
// the last one stopped, within its budget, until a cycle is complete.
TEST_F(StoreShards, ThePeriodicPassCoversTheShardsInTurns) {
  const std::int64_t now = fileops::now_ns();
  StoreLimits limits;
  limits.max_age_s = 3600;
  limits.pass_entries = 4;
  auto store = open_store(limits);
  for (int shard = 0x10; shard < 0x20; ++shard) save(*store, key_in(shard, 0), now - 2 * 3600 * kSecond);
  auto remaining = [&] {
    int left = 0;
    for (int shard = 0x10; shard < 0x20; ++shard) left += fs::exists(entry_file(key_in(shard, 0)));
    return left;
  };
  EXPECT_EQ(remaining(), 16);
  std::ofstream(root / "last_maintenance", std::ios::trunc) << "next 0\n";
  ASSERT_FALSE(fileops::set_mtime(root / "last_maintenance", now - 2 * 3600 * kSecond));
  save(*store, key_in(0x01, 0));  // due: the first turn (shard 01 and the first old ones)
  const int after_first = remaining();
  EXPECT_LT(after_first, 16);
  EXPECT_GT(after_first, 0) << "one pass covered only part of the store";
  EXPECT_NE(read_text(root / "last_maintenance"), "next 0\n");
  save(*store, key_in(0x02, 0));  // not due yet: the next turn waits a minute
  EXPECT_EQ(remaining(), after_first);
  for (int turn = 0; turn < 16 && remaining() > 0; ++turn) {
    ASSERT_FALSE(fileops::set_mtime(root / "last_maintenance", now - 120 * kSecond));
    save(*store, key_in(0x03, static_cast<std::uint64_t>(turn)));
  }
  EXPECT_EQ(remaining(), 0);
  EXPECT_EQ(store->load(key_in(0x01, 0)).status, LoadStatus::hit);
}

// The whole-store operations say how far they are, phase by phase, to the end of each phase.
TEST_F(StoreShards, LongOperationsReportProgressToTheEndOfEachPhase) {
  auto store = open_store();
  for (int shard : {0x11, 0x22, 0x33}) save(*store, key_in(shard, 0));
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> last;  // phase -> (done, total)
  const StoreProgress progress = [&](const char* what, std::uint64_t done, std::uint64_t total) {
    EXPECT_LE(done, total) << what;
    last[what] = {done, total};
  };
  auto reached_end = [&](const char* phase, std::uint64_t total) {
    const auto it = last.find(phase);
    return it != last.end() && it->second == std::make_pair(total, total);
  };
  ASSERT_EQ(store->list_summaries(progress).size(), 3u);
  EXPECT_TRUE(reached_end("listing", 3));
  EXPECT_TRUE(store->verify(false, progress).empty());
  EXPECT_TRUE(reached_end("scanning", 3));
  EXPECT_TRUE(reached_end("checking", 3));
  last.clear();
  EXPECT_EQ(store->evict(0, 0, progress).removed_entries, 3u);
  EXPECT_TRUE(reached_end("scanning", 3));
  EXPECT_TRUE(reached_end("evicting", 3));
  for (int shard : {0x11, 0x22}) save(*store, key_in(shard, 1));
  last.clear();
  EXPECT_EQ(store->clear(progress).removed_entries, 2u);
  EXPECT_TRUE(reached_end("removing", 2));
}

// ---------------------------------------------------------------------------------------------
// The listing index

TEST_F(StoreShards, TheIndexListsWhatAFullReadListsAndIsWrittenPerShard) {
  auto store = open_store();
  for (int shard : {0x01, 0x02, 0xa0}) {
    for (std::uint64_t n = 0; n < 3; ++n) save(*store, key_in(shard, n));
  }
  const auto whole = store->list();
  const auto summaries = store->list_summaries();
  ASSERT_EQ(summaries.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(summaries[i].key, whole[i].key);
    EXPECT_EQ(summaries[i].bytes, whole[i].bytes);
    EXPECT_EQ(summaries[i].last_access_ns, whole[i].last_access_ns);
    EXPECT_EQ(summaries[i].sidecar["device"], whole[i].sidecar["device"]);
    EXPECT_FALSE(summaries[i].sidecar.contains("components"));
  }
  for (int shard : {0x01, 0x02, 0xa0}) EXPECT_TRUE(fs::exists(root / "index" / store_detail::shard_name(shard)));
  EXPECT_EQ(keys_of(store->list_summaries()), keys_of(whole)) << "read back from the indexes";
}

// `ls` prints as the listing goes: one call per level-1 shard holding entries (up to 512 entries
// each), shards in key order and each shard's entries in key order, whatever order the folders and
// index lines are in.
TEST_F(StoreShards, TheListingIsHandedOverShardByShardInKeyOrder) {
  auto store = open_store();
  for (int shard : {0xa0, 0x02, 0x7f}) {
    for (std::uint64_t n : {4u, 1u, 3u}) save(*store, key_in(shard, n));
  }
  for (int pass = 0; pass < 2; ++pass) {  // the first pass writes the indexes, the second reads them
    std::vector<std::vector<Digest128>> calls;
    store->visit_summaries([&](std::vector<EntryInfo>& shard) {
      calls.emplace_back();
      for (const EntryInfo& entry : shard) calls.back().push_back(entry.key);
    });
    ASSERT_EQ(calls.size(), 3u) << "pass " << pass;
    std::vector<Digest128> all;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].size(), 3u);
      for (const Digest128& key : calls[i]) {
        EXPECT_EQ(key.high >> 56, calls[i][0].high >> 56) << "one shard per call";
        all.push_back(key);
      }
    }
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end())) << "pass " << pass;
    EXPECT_EQ(all.front().high >> 56, 0x02u);
  }
}

// The index of a shard is only used while its shard's generation is the one it names: after any
// change (a save, an eviction, a removal) it is rebuilt; an old index put back is not believed.
TEST_F(StoreShards, AStaleIndexIsRebuiltNotBelieved) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) save(*store, key_in(0x05, n));
  ASSERT_EQ(store->list_summaries().size(), 3u);
  const std::string old_index = read_text(root / "index" / "05");
  save(*store, key_in(0x05, 3));
  ASSERT_TRUE(store->remove(key_in(0x05, 0)));
  EXPECT_EQ(keys_of(store->list_summaries()), (std::set<Digest128>{key_in(0x05, 1), key_in(0x05, 2), key_in(0x05, 3)}));
  store_test::write_private(root / "index" / "05", old_index);  // an index from before the change
  EXPECT_EQ(keys_of(store->list_summaries()), (std::set<Digest128>{key_in(0x05, 1), key_in(0x05, 2), key_in(0x05, 3)}));
  EXPECT_NE(read_text(root / "index" / "05"), old_index) << "rebuilt";
}

// An entry removed behind the store's back (no generation change) is still left out: every listed
// entry is looked at; its last use is the file's, not the index's.
TEST_F(StoreShards, AListedEntryIsStatEachTime) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 2; ++n) save(*store, key_in(0x06, n));
  ASSERT_EQ(store->list_summaries().size(), 2u);
  fs::remove(entry_file(key_in(0x06, 0)));
  ASSERT_FALSE(fileops::set_mtime(entry_file(key_in(0x06, 1)), 12345 * kSecond));
  const auto listed = store->list_summaries();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key_in(0x06, 1));
  EXPECT_EQ(listed[0].last_access_ns, 12345 * kSecond);
}

TEST_F(StoreShards, ALostOrDamagedIndexIsRebuilt) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) save(*store, key_in(0x07, n));
  const auto expected = keys_of(store->list());
  ASSERT_EQ(keys_of(store->list_summaries()), expected);
  const fs::path index = root / "index" / "07";
  const std::string intact = read_text(index);

  fs::remove(index);  // lost
  EXPECT_EQ(keys_of(store->list_summaries()), expected);
  EXPECT_EQ(read_text(index), intact);

  std::string flipped = intact;
  flipped[flipped.size() - 5] ^= 1;
  const std::size_t body = intact.find('\n') + 1;
  const std::vector<std::string> damaged = {
      intact.substr(0, intact.size() / 2),  // truncated
      flipped,                              // a flipped bit
      intact + intact.substr(body),         // entries twice
      std::string(),                        // empty
  };
  for (std::size_t i = 0; i < damaged.size(); ++i) {
    store_test::write_private(index, damaged[i]);
    EXPECT_EQ(keys_of(store->list_summaries()), expected) << "damage " << i;
    EXPECT_EQ(read_text(index), intact) << "damage " << i << ": rebuilt";
  }
  // A consistent index (right generation, right checksum) naming an entry that is not there: the
  // entries on disk decide, it is not listed.
  auto entries = store_detail::parse_shard_index(0x07, slot(0x07)->generation, intact);
  ASSERT_TRUE(entries);
  entries->push_back({key_in(0x07, 99), 100, nlohmann::json::object()});
  store_test::write_private(index, store_detail::format_shard_index(0x07, slot(0x07)->generation, *entries));
  EXPECT_EQ(keys_of(store->list_summaries()), expected);
}

TEST_F(StoreShards, AnIndexAnotherUserCouldWriteIsNotUsed) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 2; ++n) save(*store, key_in(0x08, n));
  ASSERT_EQ(store->list_summaries().size(), 2u);
  const fs::path index = root / "index" / "08";
  // The same index made writable by others: not trusted.
  ::chmod(index.c_str(), 0666);
  EXPECT_EQ(store->list_summaries().size(), 2u);
  struct stat st {};
  ASSERT_EQ(::stat(index.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "replaced by a rebuilt one";
  if (::geteuid() == 0) {  // another user's file
    ASSERT_EQ(::chown(index.c_str(), 65534, 65534), 0);
    EXPECT_EQ(store->list_summaries().size(), 2u);
    ASSERT_EQ(::stat(index.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u) << "replaced by a rebuilt one";
  }
}

TEST_F(StoreShards, AReadOnlyStoreListsWithoutWritingAnIndex) {
  {
    auto writer = open_store();
    for (std::uint64_t n = 0; n < 2; ++n) save(*writer, key_in(0x09, n));
  }
  StoreLimits limits;
  limits.read_only = true;
  auto store = open_store(limits);
  EXPECT_EQ(store->list_summaries().size(), 2u);
  EXPECT_FALSE(fs::exists(root / "index"));
}

}  // namespace
}  // namespace jitcache

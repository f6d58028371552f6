// Tests for store/DiskStore: commit protocol, integrity checks, exact size accounting (also
// across processes), eviction order, limits and the refusals of open().
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "hashing/digest.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/size_ledger.hpp"
#include "tests/unit/store_entry_files.hpp"

namespace jitcache {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSecond = 1000000000;

std::int64_t now_ns() {
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * kSecond + now.tv_nsec;
}

void set_mtime(const fs::path& path, std::int64_t mtime_ns) {
  struct timespec times[2];
  times[0].tv_sec = mtime_ns / kSecond;
  times[0].tv_nsec = mtime_ns % kSecond;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

std::int64_t mtime_of(const fs::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return -1;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * kSecond + st.st_mtim.tv_nsec;
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return 0xffff;
  return st.st_mode & 07777;
}

Digest128 key_of(std::uint64_t n) { return Digest128{0x9e3779b97f4a7c15ull * (n + 1), n}; }

std::string binary_of(std::uint64_t seed, std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((seed * 131 + i * 7) & 0xff);
  return bytes;
}

nlohmann::json sidecar_of(std::uint64_t n) { return {{"api", "opencl"}, {"n", n}}; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) files.push_back(entry.path());
  return files;
}

// The truth, computed without any store code: committed = <k0k1>/<k2k3>/<key>.entry or (format 1)
// <key>.json exists; its bytes are those of every file at the key's names.
SizeInfo independent_scan(const fs::path& root) {
  static const std::regex commit_name("[0-9a-f]{32}\\.(entry|json)");
  std::set<fs::path> counted;
  SizeInfo totals;
  for (const auto& outer : fs::directory_iterator(root)) {
    if (!outer.is_directory() || outer.path().filename().string().size() != 2) continue;
    for (const auto& inner : fs::directory_iterator(outer.path())) {
      if (!inner.is_directory()) continue;
      for (const auto& file : fs::directory_iterator(inner.path())) {
        if (!std::regex_match(file.path().filename().string(), commit_name)) continue;
        const fs::path stem = inner.path() / file.path().stem();
        if (!counted.insert(stem).second) continue;
        totals.entries += 1;
        for (const char* extension : {".entry", ".json", ".bin"}) {
          fs::path name = stem;
          name += extension;
          if (fs::exists(name)) totals.bytes += fs::file_size(name);
        }
      }
    }
  }
  return totals;
}

::testing::AssertionResult same_size(const SizeInfo& a, const SizeInfo& b) {
  if (a.bytes == b.bytes && a.entries == b.entries) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a.bytes << " bytes/" << a.entries << " entries vs "
                                       << b.bytes << " bytes/" << b.entries << " entries";
}

class DiskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "jitcache-store-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
    root_ = scratch_ / "cache";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, ignored);
    fs::remove_all(scratch_, ignored);
  }

  std::unique_ptr<DiskStore> open_store(StoreLimits limits = {}) {
    std::string error;
    auto store = DiskStore::open(root_, limits, &error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }

  fs::path entry_file(const Digest128& key, const char* extension) const {
    const std::string hex = key.hex();
    return root_ / hex.substr(0, 2) / hex.substr(2, 2) / (hex + extension);
  }

  // Bytes one entry made of binary_of(n, binary_size) + sidecar_of(n) occupies, measured.
  std::uint64_t entry_bytes(const Digest128& key) const { return fs::file_size(entry_file(key, ".entry")); }

  // An entry as an older jitcache (store format 1) left it.
  void save_format1(const Digest128& key, const std::string& binary, const nlohmann::json& sidecar) const {
    store_test::write_format1_entry(root_, key, binary, sidecar);
  }

  // One entry per case, saved by `save` and damaged by the case: its load is corrupt (for the
  // case's reason), the next a miss, and the size totals are back to an empty store's.
  struct DamageCase {
    const char* what;
    std::function<void(const Digest128&)> damage;
    const char* reason;
  };
  void expect_each_damage_corrupt(DiskStore& store, std::uint64_t first_key, const std::vector<DamageCase>& cases,
                                  const std::function<void(const Digest128&, std::uint64_t)>& save) {
    std::uint64_t n = first_key;
    for (const DamageCase& c : cases) {
      const Digest128 key = key_of(++n);
      save(key, n);
      c.damage(key);
      const LoadResult loaded = store.load(key);
      EXPECT_EQ(loaded.status, LoadStatus::corrupt) << c.what;
      EXPECT_NE(loaded.reason.find(c.reason), std::string::npos) << c.what << ": " << loaded.reason;
      EXPECT_EQ(store.load(key).status, LoadStatus::miss) << c.what;
    }
    EXPECT_TRUE(same_size(store.size(), {0, 0}));
    EXPECT_TRUE(same_size(store.size(), independent_scan(root_)));
  }

  fs::path scratch_;
  fs::path root_;
};

// ---------------------------------------------------------------------------------------------
// open()

TEST_F(DiskStoreTest, OpenCreatesRootAndParentsPrivate) {
  root_ = scratch_ / "a" / "b" / "cache";
  auto store = open_store();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->root(), root_);
  EXPECT_EQ(mode_of(root_), 0700u);
  EXPECT_EQ(mode_of(scratch_ / "a"), 0700u);
  EXPECT_EQ(mode_of(scratch_ / "a" / "b"), 0700u);
}

TEST_F(DiskStoreTest, OpenRefusesGroupOrWorldWritableRoot) {
  ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
  for (mode_t mode : {0777, 0770, 0702}) {
    ASSERT_EQ(chmod(root_.c_str(), mode), 0);
    std::string error;
    EXPECT_EQ(DiskStore::open(root_, {}, &error), nullptr) << std::oct << mode;
    EXPECT_NE(error.find("writable by group or others"), std::string::npos) << error;
  }
  ASSERT_EQ(chmod(root_.c_str(), 0755), 0);  // readable by others is fine
  std::string error;
  EXPECT_NE(DiskStore::open(root_, {}, &error), nullptr) << error;
}

TEST_F(DiskStoreTest, OpenRefusesSymlinkRoot) {
  const fs::path real = scratch_ / "real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  fs::create_directory_symlink(real, root_);
  std::string error;
  EXPECT_EQ(DiskStore::open(root_, {}, &error), nullptr);
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_TRUE(files_in(real).empty()) << "nothing may be created through the link";
}

TEST_F(DiskStoreTest, OpenRefusesNonDirectoryRoot) {
  write_text(root_, "not a directory");
  std::string error;
  EXPECT_EQ(DiskStore::open(root_, {}, &error), nullptr);
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
}

TEST_F(DiskStoreTest, OpenRefusesRootOwnedByAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
  ASSERT_EQ(chown(root_.c_str(), 65534, 65534), 0);
  std::string error;
  EXPECT_EQ(DiskStore::open(root_, {}, &error), nullptr);
  EXPECT_NE(error.find("owned by uid 65534"), std::string::npos) << error;
}

// ---------------------------------------------------------------------------------------------
// Layout, commit protocol, integrity

TEST_F(DiskStoreTest, SaveThenLoadRoundTripsInTheDocumentedLayout) {
  auto store = open_store();
  const Digest128 key = key_of(1);
  const std::string binary = binary_of(1, 1000);
  const SaveResult saved = store->save(key, binary, sidecar_of(1));
  ASSERT_EQ(saved.status, SaveStatus::stored) << saved.reason;

  // One file: header, sidecar, binary.
  EXPECT_TRUE(fs::is_regular_file(entry_file(key, ".entry")));
  EXPECT_FALSE(fs::exists(entry_file(key, ".bin")));
  EXPECT_FALSE(fs::exists(entry_file(key, ".json")));
  const std::string file = read_text(entry_file(key, ".entry"));
  EXPECT_EQ(file.substr(0, 8), "jcentry2");
  EXPECT_EQ(file.substr(file.size() - binary.size()), binary);
  EXPECT_EQ(mode_of(entry_file(key, ".entry")), 0600u);
  EXPECT_EQ(mode_of(entry_file(key, ".entry").parent_path()), 0700u);
  EXPECT_EQ(mode_of(entry_file(key, ".entry").parent_path().parent_path()), 0700u);
  EXPECT_EQ(read_text(root_ / "format"), "jitcache-store-format 2\n");
  EXPECT_TRUE(files_in(root_ / "tmp").empty()) << "temp files must be renamed away";

  const LoadResult loaded = store->load(key);
  ASSERT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
  EXPECT_EQ(loaded.binary, binary);
  EXPECT_EQ(loaded.sidecar["api"], "opencl");
  EXPECT_EQ(loaded.sidecar["binary_size"], 1000u);
  EXPECT_EQ(loaded.sidecar["binary_xxh3_64"], hex64(xxh3_64(binary)));

  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::miss);
}

// The engine's hit path (whole_sidecar = false) leaves the key's components (the program's text
// among them, most of a sidecar's bytes) out of the parse and hands on the answers as their text,
// as a pack hit does; the checks and the fields a hit answers from are the same, and the tools'
// default read has them whole.
TEST_F(DiskStoreTest, AHitCanLeaveTheComponentsUnparsedAndTheToolsGetThemWhole) {
  auto store = open_store();
  const Digest128 key = key_of(5);
  const std::string binary = binary_of(5, 1000);
  nlohmann::json sidecar = sidecar_of(5);
  sidecar["components"] = {{"input", {{"value", {{"text", std::string(4096, 'x')}}}}}};
  sidecar["answers"] = {{"version", 1}, {"build_log", "ok"}, {"kernels", nlohmann::json::object()}};
  sidecar["compile_time_us"] = 1234;
  ASSERT_EQ(store->save(key, binary, sidecar).status, SaveStatus::stored);

  const LoadResult hit = store->load(key, /*whole_sidecar=*/false);
  ASSERT_EQ(hit.status, LoadStatus::hit) << hit.reason;
  EXPECT_EQ(hit.binary, binary);
  EXPECT_TRUE(hit.sidecar["components"].is_null());
  EXPECT_EQ(hit.sidecar["compile_time_us"], 1234);
  EXPECT_EQ(hit.sidecar["binary_xxh3_64"], hex64(xxh3_64(binary)));
  EXPECT_FALSE(hit.sidecar.contains("answers"));
  ASSERT_TRUE(hit.answers);
  EXPECT_EQ(nlohmann::json::parse(*hit.answers), sidecar["answers"]);

  const LoadResult whole = store->load(key);
  ASSERT_EQ(whole.status, LoadStatus::hit) << whole.reason;
  EXPECT_EQ(whole.sidecar["components"]["input"]["value"]["text"], std::string(4096, 'x'));
  EXPECT_EQ(whole.sidecar["answers"], sidecar["answers"]);
  EXPECT_FALSE(whole.answers);

  // Left out of the parse or not, a binary that is not the one the sidecar describes is not served.
  store_test::flip_byte(entry_file(key, ".entry"), store_test::binary_offset(entry_file(key, ".entry")) + 10);
  EXPECT_EQ(store->load(key, /*whole_sidecar=*/false).status, LoadStatus::corrupt);
}

TEST_F(DiskStoreTest, BinaryWithoutSidecarIsAMissAndIsLeftAlone) {
  auto store = open_store();
  const Digest128 key = key_of(3);
  fs::create_directories(entry_file(key, ".bin").parent_path());
  write_text(entry_file(key, ".bin"), binary_of(3, 100));  // a writer that died before commit
  EXPECT_EQ(store->load(key).status, LoadStatus::miss);
  EXPECT_TRUE(fs::exists(entry_file(key, ".bin"))) << "uncommitted is not corrupt";
  EXPECT_TRUE(same_size(store->size(), {0, 0}));

  ASSERT_EQ(store->save(key_of(4), binary_of(4, 100), sidecar_of(4)).status, SaveStatus::stored);
  fs::remove(entry_file(key_of(4), ".entry"));  // removed by hand
  EXPECT_EQ(store->load(key_of(4)).status, LoadStatus::miss);
}

TEST_F(DiskStoreTest, FlippedByteIsCorruptQuarantinedAndThenAMiss) {
  auto store = open_store();
  const Digest128 key = key_of(5);
  ASSERT_EQ(store->save(key, binary_of(5, 4096), sidecar_of(5)).status, SaveStatus::stored);
  const fs::path file = entry_file(key, ".entry");
  store_test::flip_byte(file, store_test::binary_offset(file) + 1234);
  const LoadResult loaded = store->load(key);
  EXPECT_EQ(loaded.status, LoadStatus::corrupt);
  EXPECT_NE(loaded.reason.find("binary checksum"), std::string::npos) << loaded.reason;
  EXPECT_TRUE(loaded.binary.empty());
  EXPECT_FALSE(fs::exists(file));
  std::set<std::string> kept;
  for (const auto& path : files_in(root_ / "quarantine")) kept.insert(path.extension().string());
  EXPECT_EQ(kept, (std::set<std::string>{".entry", ".reason"}));
  EXPECT_EQ(store->load(key).status, LoadStatus::miss);
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
}

// What an older jitcache stored is checked as before: its sidecar against its binary.
TEST_F(DiskStoreTest, Format1FlippedByteIsCorruptQuarantinedAndThenAMiss) {
  auto store = open_store();
  const Digest128 key = key_of(5);
  save_format1(key, binary_of(5, 4096), sidecar_of(5));
  {
    std::fstream file(entry_file(key, ".bin"), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(1234);
    file.put('\x5a' ^ binary_of(5, 4096)[1234]);
  }
  const LoadResult loaded = store->load(key);
  EXPECT_EQ(loaded.status, LoadStatus::corrupt);
  EXPECT_NE(loaded.reason.find("checksum"), std::string::npos) << loaded.reason;
  EXPECT_TRUE(loaded.binary.empty());

  EXPECT_FALSE(fs::exists(entry_file(key, ".bin")));
  EXPECT_FALSE(fs::exists(entry_file(key, ".json")));
  std::set<std::string> kept;
  for (const auto& path : files_in(root_ / "quarantine")) kept.insert(path.extension().string());
  EXPECT_EQ(kept, (std::set<std::string>{".bin", ".json", ".reason"}));
  for (const auto& path : files_in(root_ / "quarantine")) {
    EXPECT_EQ(path.filename().string().rfind(key.hex() + ".", 0), 0u) << path;
  }

  EXPECT_EQ(store->load(key).status, LoadStatus::miss);
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
}

// An entry file cut in half, and a format 1 sidecar cut in half: corrupt, quarantined (with the
// reason), then a miss.
TEST_F(DiskStoreTest, TruncatedCommitFileIsCorruptAndQuarantined) {
  struct Case {
    const char* cut;
    const char* reason;
    std::size_t quarantined;  // files, the reason note included
  };
  std::uint64_t n = 0;
  for (const Case& c : {Case{".entry", "its header says", 2}, Case{".json", "not valid JSON", 3}}) {
    auto store = open_store();
    const Digest128 key = key_of(++n);
    if (c.cut == std::string(".entry")) {
      ASSERT_EQ(store->save(key, binary_of(n, 500), sidecar_of(n)).status, SaveStatus::stored);
    } else {
      save_format1(key, binary_of(n, 500), sidecar_of(n));
    }
    const std::string text = read_text(entry_file(key, c.cut));
    write_text(entry_file(key, c.cut), text.substr(0, text.size() / 2));
    const LoadResult loaded = store->load(key);
    EXPECT_EQ(loaded.status, LoadStatus::corrupt) << c.cut;
    EXPECT_NE(loaded.reason.find(c.reason), std::string::npos) << loaded.reason;
    EXPECT_FALSE(fs::exists(entry_file(key, c.cut)));
    EXPECT_EQ(files_in(root_ / "quarantine").size(), c.quarantined) << c.cut;
    EXPECT_EQ(store->load(key).status, LoadStatus::miss);
    fs::remove_all(root_ / "quarantine");
  }
}

// Damage to a format 2 entry file, each caught by its own check.
TEST_F(DiskStoreTest, DamagedEntryFilesAreCorrupt) {
  auto store = open_store();
  const std::size_t sidecar_byte = store_detail::kEntryHeaderBytes + 3;
  auto file = [&](const Digest128& k) { return entry_file(k, ".entry"); };
  const std::vector<DamageCase> cases = {
      {"shorter than a header", [&](const Digest128& k) { write_text(file(k), "jcentry2"); }, "shorter than its header"},
      {"another magic", [&](const Digest128& k) { store_test::flip_byte(file(k), 0); }, "does not start with"},
      {"header damaged", [&](const Digest128& k) { store_test::flip_byte(file(k), 20); }, "header checksum"},
      {"sidecar damaged", [&](const Digest128& k) { store_test::flip_byte(file(k), sidecar_byte); }, "sidecar checksum"},
      {"binary longer", [&](const Digest128& k) { std::ofstream(file(k), std::ios::app | std::ios::binary) << 'x'; },
       "its header says"},
  };
  expect_each_damage_corrupt(*store, 200, cases, [&](const Digest128& key, std::uint64_t n) {
    ASSERT_EQ(store->save(key, binary_of(n, 300), sidecar_of(n)).status, SaveStatus::stored);
  });
}

TEST_F(DiskStoreTest, Format1OtherDamageIsCorrupt) {
  auto store = open_store();
  const std::vector<DamageCase> cases = {
      {"sidecar without integrity fields",
       [&](const Digest128& k) { write_text(entry_file(k, ".json"), R"({"api":"opencl"})"); },
       "binary_size"},
      {"sidecar is an array", [&](const Digest128& k) { write_text(entry_file(k, ".json"), "[1,2]"); },
       "not a JSON object"},
      {"binary missing", [&](const Digest128& k) { fs::remove(entry_file(k, ".bin")); }, "missing"},
      {"binary longer",
       [&](const Digest128& k) {
         std::ofstream(entry_file(k, ".bin"), std::ios::app | std::ios::binary) << 'x';
       },
       "size"},
  };
  expect_each_damage_corrupt(*store, 100, cases, [&](const Digest128& key, std::uint64_t n) {
    save_format1(key, binary_of(n, 300), sidecar_of(n));
  });
}

TEST_F(DiskStoreTest, HitTouchesTheEntryFileMtime) {
  auto store = open_store();
  const Digest128 key = key_of(7);
  ASSERT_EQ(store->save(key, binary_of(7, 100), sidecar_of(7)).status, SaveStatus::stored);
  const std::int64_t old = now_ns() - 10 * 24 * 3600 * kSecond;
  set_mtime(entry_file(key, ".entry"), old);
  const std::int64_t before = now_ns();
  ASSERT_EQ(store->load(key).status, LoadStatus::hit);
  EXPECT_GE(mtime_of(entry_file(key, ".entry")), before - kSecond);  // coarse-clock file systems

  set_mtime(entry_file(key, ".entry"), old);
  EXPECT_EQ(store->load(key_of(8)).status, LoadStatus::miss);
  EXPECT_EQ(mtime_of(entry_file(key, ".entry")), old) << "a miss on another key touches nothing";
}

TEST_F(DiskStoreTest, SaveNeverThrowsOnOddSidecars) {
  auto store = open_store();
  nlohmann::json log_with_bad_utf8 = {{"log", std::string("bad \xff\xfe utf8")}};
  EXPECT_EQ(store->save(key_of(9), "abc", log_with_bad_utf8).status, SaveStatus::stored);
  EXPECT_EQ(store->load(key_of(9)).status, LoadStatus::hit);
  EXPECT_EQ(store->save(key_of(10), "abc", nlohmann::json::array({1})).status, SaveStatus::error);
  EXPECT_EQ(store->save(key_of(11), "abc", nullptr).status, SaveStatus::stored);
}

// ---------------------------------------------------------------------------------------------
// Size accounting

TEST_F(DiskStoreTest, SizeAccountingIsExactThroughSavesReplacementsAndRemovals) {
  auto store = open_store();
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
  for (std::uint64_t n = 0; n < 20; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 100 + 37 * n), sidecar_of(n)).status,
              SaveStatus::stored);
  }
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->size().entries, 20u);

  // Replacements, larger and smaller, with a bigger sidecar too.
  for (std::uint64_t n = 0; n < 20; n += 3) {
    nlohmann::json sidecar = sidecar_of(n);
    sidecar["build_log"] = std::string(n * 11, 'L');
    ASSERT_EQ(store->save(key_of(n), binary_of(n + 1, n % 2 ? 5000 : 10), sidecar).status,
              SaveStatus::stored);
    EXPECT_TRUE(same_size(store->size(), independent_scan(root_))) << "after replacing " << n;
  }
  EXPECT_EQ(store->size().entries, 20u);

  EXPECT_TRUE(store->remove(key_of(4)));
  EXPECT_FALSE(store->remove(key_of(4)));
  EXPECT_FALSE(store->remove(key_of(999)));
  store->quarantine(key_of(5), "test");
  store->quarantine(key_of(999), "test");  // nothing there: nothing changes
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->size().entries, 18u);

  const SizeInfo recorded = store->size();
  EXPECT_TRUE(same_size(store->rescan_size(), recorded));
}

TEST_F(DiskStoreTest, SizeRecordIsRebuiltWhenMissingCorruptOrDirty) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 5; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 200 + n), sidecar_of(n)).status, SaveStatus::stored);
  }
  const SizeInfo truth = independent_scan(root_);
  const fs::path record = root_ / "size";

  fs::remove(record);
  EXPECT_TRUE(same_size(store->size(), truth)) << "missing record";

  write_text(record, "garbage\n");
  EXPECT_TRUE(same_size(store->size(), truth)) << "corrupt record";

  // A process that died between "dirty" and "clean" leaves this behind.
  write_text(record, store_detail::format_size_record({{123, 4}, true}));
  EXPECT_TRUE(same_size(store->size(), truth)) << "dirty record";
  EXPECT_EQ(read_text(record), store_detail::format_size_record({truth, false}));

  // Opening leaves it alone (a process that only hits never takes the size lock, nor scans the
  // store before its first lookup); a hit too; the first operation that takes the lock repairs it.
  const std::string damaged = store_detail::format_size_record({{123, 4}, true});
  write_text(record, damaged);
  store.reset();
  store = open_store();
  EXPECT_EQ(read_text(record), damaged) << "opening the store rebuilt the size record";
  ASSERT_EQ(store->load(key_of(0)).status, LoadStatus::hit);
  EXPECT_EQ(read_text(record), damaged) << "a hit rebuilt the size record";
  EXPECT_TRUE(same_size(store->size(), truth));
  EXPECT_EQ(read_text(record), store_detail::format_size_record({truth, false}));

  // A clean record is trusted (that is what makes size() O(1)); rescan_size() rewrites it.
  write_text(record, store_detail::format_size_record({{1, 1}, false}));
  EXPECT_TRUE(same_size(store->size(), {1, 1}));
  EXPECT_TRUE(same_size(store->rescan_size(), truth));
  EXPECT_TRUE(same_size(store->size(), truth));
}

TEST(SizeRecordFormat, RoundTripsAndRejectsDamage) {
  const store_detail::SizeRecord record{{123456789012345ull, 42}, false};
  const std::string text = store_detail::format_size_record(record);
  auto parsed = store_detail::parse_size_record(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->totals.bytes, 123456789012345ull);
  EXPECT_EQ(parsed->totals.entries, 42u);
  EXPECT_FALSE(parsed->dirty);
  EXPECT_EQ(store_detail::format_size_record({{0, 0}, true}).size(), text.size());
  EXPECT_TRUE(store_detail::parse_size_record(store_detail::format_size_record({{0, 0}, true}))->dirty);
  EXPECT_FALSE(store_detail::parse_size_record(text.substr(0, text.size() - 1)));
  std::string flipped = text;
  flipped[text.find("bytes=") + 8] = 'x';
  EXPECT_FALSE(store_detail::parse_size_record(flipped));
  EXPECT_FALSE(store_detail::parse_size_record(""));
}

// Several processes hammer a shared key set; every process also reads, which must never see a
// torn replacement as corrupt. Returns the exit codes of the children.
std::vector<int> run_writer_processes(const fs::path& root, const StoreLimits& limits, int processes,
                                      int saves_each) {
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      int failure = 0;
      std::string error;
      auto store = DiskStore::open(root, limits, &error);
      if (!store) _exit(10);
      for (int i = 0; i < saves_each && failure == 0; ++i) {
        const std::uint64_t n = static_cast<std::uint64_t>(i * 7 + p) % 40;  // shared keys
        const std::size_t size = 64 + static_cast<std::size_t>((p * 389 + i * 97) % 3000);
        nlohmann::json sidecar = sidecar_of(n);
        sidecar["writer"] = p;
        const SaveResult saved = store->save(key_of(n), binary_of(n * 31 + p, size), sidecar);
        if (saved.status != SaveStatus::stored) failure = 11;
        if (i % 3 == 0) {
          const LoadResult loaded = store->load(key_of((n + 5) % 40));
          if (loaded.status == LoadStatus::corrupt || loaded.status == LoadStatus::error) failure = 12;
        }
        if (i % 10 == 9) store->remove(key_of((n + 11) % 40));
      }
      store.reset();
      _exit(failure);
    }
    children.push_back(pid);
  }
  std::vector<int> codes;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status));
  }
  return codes;
}

TEST_F(DiskStoreTest, SizeAccountingIsExactUnderEightWriterProcesses) {
  auto store = open_store();
  const auto codes = run_writer_processes(root_, {}, 8, 150);
  EXPECT_EQ(codes, std::vector<int>(8, 0)) << "11: save failed, 12: a load saw corrupt/error";

  const SizeInfo recorded = store->size();
  EXPECT_TRUE(same_size(recorded, independent_scan(root_)));
  EXPECT_TRUE(same_size(store->rescan_size(), recorded));
  EXPECT_GT(recorded.entries, 0u);
  EXPECT_TRUE(files_in(root_ / "quarantine").empty()) << "no valid entry may be quarantined";
  EXPECT_TRUE(store->verify(false).empty());
  EXPECT_TRUE(files_in(root_ / "tmp").empty());
}

TEST_F(DiskStoreTest, SizeAccountingIsExactWhileProcessesEvictConcurrently) {
  StoreLimits limits;
  limits.max_size = 30000;  // roughly 15 of the ~2 KB entries: evictions run all the time
  limits.low_water = 0.5;
  auto store = open_store(limits);
  const auto codes = run_writer_processes(root_, limits, 8, 150);
  EXPECT_EQ(codes, std::vector<int>(8, 0)) << "11: save failed, 12: a load saw corrupt/error";

  const SizeInfo recorded = store->size();
  EXPECT_TRUE(same_size(recorded, independent_scan(root_)));
  EXPECT_TRUE(same_size(store->rescan_size(), recorded));
  EXPECT_TRUE(files_in(root_ / "quarantine").empty());
  EXPECT_TRUE(store->verify(false).empty());
}

// ---------------------------------------------------------------------------------------------
// Eviction

TEST_F(DiskStoreTest, EvictionRemovesLeastRecentlyUsedFirst) {
  auto store = open_store();
  const std::int64_t base = now_ns() - 1000 * kSecond;
  for (std::uint64_t n = 0; n < 5; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 1000), sidecar_of(n)).status, SaveStatus::stored);
    set_mtime(entry_file(key_of(n), ".entry"), base + static_cast<std::int64_t>(n) * 10 * kSecond);
  }
  // Key 0 was saved first but is used now: it must outlive 1 and 2.
  ASSERT_EQ(store->load(key_of(0)).status, LoadStatus::hit);

  const std::uint64_t keep = entry_bytes(key_of(0)) + entry_bytes(key_of(3)) + entry_bytes(key_of(4));
  const std::uint64_t doomed = entry_bytes(key_of(1)) + entry_bytes(key_of(2));
  const EvictionReport report = store->evict(keep, 0);
  EXPECT_EQ(report.removed_entries, 2u);
  EXPECT_EQ(report.removed_bytes, doomed);
  EXPECT_EQ(store->load(key_of(0)).status, LoadStatus::hit);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(3)).status, LoadStatus::hit);
  EXPECT_EQ(store->load(key_of(4)).status, LoadStatus::hit);
  EXPECT_TRUE(same_size(store->size(), {keep, 3}));
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
}

TEST_F(DiskStoreTest, SaveOverMaxSizeEvictsDownToLowWater) {
  std::uint64_t entry;
  {
    auto probe = open_store();
    ASSERT_EQ(probe->save(key_of(0), binary_of(0, 1000), sidecar_of(0)).status, SaveStatus::stored);
    entry = entry_bytes(key_of(0));  // all entries below have this size
  }
  StoreLimits limits;
  limits.max_size = entry * 4 + entry / 2;  // four fit
  limits.low_water = 0.5;                   // down to 2.25 entries: two survive
  auto store = open_store(limits);
  const std::int64_t base = now_ns() - 1000 * kSecond;
  for (std::uint64_t n = 0; n < 4; ++n) {
    if (n > 0) {
      const SaveResult saved = store->save(key_of(n), binary_of(n, 1000), sidecar_of(n));
      ASSERT_EQ(saved.status, SaveStatus::stored);
      EXPECT_EQ(saved.evicted_entries, 0u) << "still under max_size";
    }
    set_mtime(entry_file(key_of(n), ".entry"), base + static_cast<std::int64_t>(n) * kSecond);
  }
  ASSERT_EQ(store->load(key_of(1)).status, LoadStatus::hit);  // recently used

  const SaveResult saved = store->save(key_of(4), binary_of(4, 1000), sidecar_of(4));
  ASSERT_EQ(saved.status, SaveStatus::stored);
  EXPECT_EQ(saved.evicted_entries, 3u);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::hit);
  EXPECT_EQ(store->load(key_of(4)).status, LoadStatus::hit);
  for (std::uint64_t n : {0, 2, 3}) EXPECT_EQ(store->load(key_of(n)).status, LoadStatus::miss) << n;
  EXPECT_TRUE(same_size(store->size(), {2 * entry, 2}));
  EXPECT_LE(store->size().bytes, static_cast<std::uint64_t>(limits.max_size * limits.low_water));
}

// An entry that grew outside jitcache (here: its sidecar, by hand) is larger than the ledger
// thinks; replacing it must not wrap the total around and evict the fresh entry.
TEST_F(DiskStoreTest, EntryGrownOutsideTheLedgerIsRecountedNotWrappedAround) {
  StoreLimits limits;
  limits.max_size = 1 << 20;
  auto store = open_store(limits);
  ASSERT_EQ(store->save(key_of(0), binary_of(0, 100), sidecar_of(0)).status, SaveStatus::stored);
  {
    std::ofstream grow(entry_file(key_of(0), ".entry"), std::ios::app);
    grow << std::string(8192, ' ');  // still the same JSON
  }
  const SaveResult saved = store->save(key_of(0), binary_of(1, 100), sidecar_of(0));
  ASSERT_EQ(saved.status, SaveStatus::stored);
  EXPECT_EQ(saved.evicted_entries, 0u);
  EXPECT_EQ(store->load(key_of(0)).status, LoadStatus::hit);
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
}

TEST_F(DiskStoreTest, EvictByAgeRemovesOnlyOldEntries) {
  auto store = open_store();
  const std::int64_t now = now_ns();
  const std::int64_t ages_s[] = {7200, 4000, 100, 0};
  for (std::uint64_t n = 0; n < 4; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 500), sidecar_of(n)).status, SaveStatus::stored);
    set_mtime(entry_file(key_of(n), ".entry"), now - ages_s[n] * kSecond);
  }
  const EvictionReport report = store->evict(std::numeric_limits<std::uint64_t>::max(), 3600);
  EXPECT_EQ(report.removed_entries, 2u);
  EXPECT_EQ(store->load(key_of(0)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::hit);
  EXPECT_EQ(store->load(key_of(3)).status, LoadStatus::hit);
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
}

TEST_F(DiskStoreTest, SaveRunsAgeEvictionWhenThePeriodicPassIsDue) {
  StoreLimits limits;
  limits.max_age_s = 3600;
  auto store = open_store(limits);
  const std::int64_t now = now_ns();
  for (std::uint64_t n = 0; n < 3; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 500), sidecar_of(n)).status, SaveStatus::stored);
  }
  set_mtime(entry_file(key_of(0), ".entry"), now - 2 * 3600 * kSecond);
  set_mtime(entry_file(key_of(1), ".entry"), now - 2 * 3600 * kSecond);

  // The last pass was just now: an ordinary save does not scan the store.
  SaveResult saved = store->save(key_of(10), binary_of(10, 500), sidecar_of(10));
  EXPECT_EQ(saved.evicted_entries, 0u);
  EXPECT_EQ(store->load(key_of(0)).status, LoadStatus::hit);  // (this refreshes key 0)
  set_mtime(entry_file(key_of(0), ".entry"), now - 2 * 3600 * kSecond);

  set_mtime(root_ / "last_maintenance", now - 2 * 3600 * kSecond);
  saved = store->save(key_of(11), binary_of(11, 500), sidecar_of(11));
  ASSERT_EQ(saved.status, SaveStatus::stored);
  EXPECT_EQ(saved.evicted_entries, 2u);
  EXPECT_EQ(store->load(key_of(0)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::hit);
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
}

TEST_F(DiskStoreTest, EvictionSkipsWhenAnotherProcessIsEvicting) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 500), sidecar_of(n)).status, SaveStatus::stored);
  }
  const int held = ::open((root_ / "evict.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  EXPECT_EQ(store->evict(0, 0).removed_entries, 0u);
  EXPECT_EQ(store->size().entries, 3u);
  close(held);
  EXPECT_EQ(store->evict(0, 0).removed_entries, 3u);
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
}

// ---------------------------------------------------------------------------------------------
// Limits and modes

TEST_F(DiskStoreTest, EntrySizeLimitsSkipSaves) {
  StoreLimits limits;
  limits.min_entry_size = 10;
  limits.max_entry_size = 100;
  auto store = open_store(limits);
  EXPECT_EQ(store->save(key_of(1), binary_of(1, 9), {}).status, SaveStatus::skipped);
  EXPECT_EQ(store->save(key_of(2), binary_of(2, 10), {}).status, SaveStatus::stored);
  EXPECT_EQ(store->save(key_of(3), binary_of(3, 100), {}).status, SaveStatus::stored);
  EXPECT_EQ(store->save(key_of(4), binary_of(4, 101), {}).status, SaveStatus::skipped);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(4)).status, LoadStatus::miss);
  EXPECT_EQ(store->size().entries, 2u);
  EXPECT_TRUE(files_in(root_ / "tmp").empty());
}

TEST_F(DiskStoreTest, ReadOnlyStoreServesHitsAndChangesNothing) {
  {
    auto writer = open_store();
    ASSERT_EQ(writer->save(key_of(1), binary_of(1, 300), sidecar_of(1)).status, SaveStatus::stored);
    ASSERT_EQ(writer->save(key_of(2), binary_of(2, 300), sidecar_of(2)).status, SaveStatus::stored);
  }
  const std::int64_t old = now_ns() - 1000 * kSecond;
  set_mtime(entry_file(key_of(1), ".entry"), old);
  write_text(entry_file(key_of(2), ".entry"), "damaged");
  const std::string record_before = read_text(root_ / "size");

  StoreLimits limits;
  limits.read_only = true;
  auto store = open_store(limits);
  EXPECT_EQ(store->save(key_of(3), binary_of(3, 300), sidecar_of(3)).status, SaveStatus::skipped);
  EXPECT_FALSE(fs::exists(entry_file(key_of(3), ".entry")));

  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::hit);
  EXPECT_EQ(mtime_of(entry_file(key_of(1), ".entry")), old) << "read-only: no LRU touch";

  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::corrupt);
  EXPECT_TRUE(fs::exists(entry_file(key_of(2), ".entry"))) << "read-only: no quarantine";
  EXPECT_FALSE(fs::exists(root_ / "quarantine"));

  EXPECT_FALSE(store->remove(key_of(1)));
  EXPECT_EQ(store->evict(0, 0).removed_entries, 0u);
  EXPECT_EQ(store->clear().removed_entries, 0u);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::hit);
  EXPECT_EQ(store->size().entries, 2u);
  EXPECT_EQ(read_text(root_ / "size"), record_before);
}

TEST_F(DiskStoreTest, ReadOnlyOpenOfAMissingRootIsAnEmptyStoreThatCreatesNothing) {
  StoreLimits limits;
  limits.read_only = true;
  std::string error;
  auto store = DiskStore::open(root_, limits, &error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->save(key_of(1), binary_of(1, 100), sidecar_of(1)).status, SaveStatus::skipped);
  EXPECT_FALSE(fs::exists(root_));
}

// ---------------------------------------------------------------------------------------------
// Upgrade: a store an older jitcache (format 1) wrote

TEST_F(DiskStoreTest, AFormat1StoreIsServedListedCountedAndEvicted) {
  for (std::uint64_t n = 0; n < 3; ++n) save_format1(key_of(n), binary_of(n, 300 + n), sidecar_of(n));
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) {
    const LoadResult loaded = store->load(key_of(n), /*whole_sidecar=*/n % 2 == 0);
    ASSERT_EQ(loaded.status, LoadStatus::hit) << loaded.reason;
    EXPECT_EQ(loaded.binary, binary_of(n, 300 + n));
    EXPECT_EQ(loaded.sidecar["n"], n);
  }
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->size().entries, 3u);
  const auto listed = store->list();
  ASSERT_EQ(listed.size(), 3u);
  for (const auto& entry : listed) {
    EXPECT_EQ(entry.bytes, fs::file_size(entry_file(entry.key, ".json")) + fs::file_size(entry_file(entry.key, ".bin")));
    EXPECT_EQ(entry.sidecar["api"], "opencl");
  }
  EXPECT_TRUE(store->verify(true).empty());

  // Saving a key again writes it in format 2; its pair goes.
  ASSERT_EQ(store->save(key_of(0), binary_of(10, 400), sidecar_of(10)).status, SaveStatus::stored);
  EXPECT_TRUE(fs::exists(entry_file(key_of(0), ".entry")));
  EXPECT_FALSE(fs::exists(entry_file(key_of(0), ".json")));
  EXPECT_FALSE(fs::exists(entry_file(key_of(0), ".bin")));
  EXPECT_EQ(store->load(key_of(0)).binary, binary_of(10, 400));
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));

  // Eviction treats both formats alike (least recently used first).
  const std::int64_t old = now_ns() - 1000 * kSecond;
  set_mtime(entry_file(key_of(1), ".json"), old);
  const std::uint64_t keep = store->size().bytes - fs::file_size(entry_file(key_of(1), ".json")) -
                             fs::file_size(entry_file(key_of(1), ".bin"));
  EXPECT_EQ(store->evict(keep, 0).removed_entries, 1u);
  EXPECT_FALSE(fs::exists(entry_file(key_of(1), ".bin")));
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::miss);
  EXPECT_EQ(store->load(key_of(2)).status, LoadStatus::hit);
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->evict(0, 0).removed_entries, 2u);
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
}

// A save killed after its entry file's rename, before the key's format 1 pair was removed: the
// entry file is what is served, the pair counts until a save or removal of the key takes it.
TEST_F(DiskStoreTest, AFormat1PairLeftNextToAnEntryFileIsNeverServed) {
  auto store = open_store();
  ASSERT_EQ(store->save(key_of(1), binary_of(1, 300), sidecar_of(1)).status, SaveStatus::stored);
  save_format1(key_of(1), binary_of(2, 500), sidecar_of(2));
  EXPECT_EQ(store->load(key_of(1)).binary, binary_of(1, 300));
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->size().entries, 1u);
  EXPECT_TRUE(store->remove(key_of(1)));
  for (const char* extension : {".entry", ".json", ".bin"}) EXPECT_FALSE(fs::exists(entry_file(key_of(1), extension)));
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
}

// ---------------------------------------------------------------------------------------------
// list, verify, clear

TEST_F(DiskStoreTest, ListReturnsEveryCommittedEntryWithItsSidecar) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 100 + n), sidecar_of(n)).status, SaveStatus::stored);
  }
  fs::create_directories(entry_file(key_of(7), ".bin").parent_path());
  write_text(entry_file(key_of(7), ".bin"), "orphan");

  const auto entries = store->list();
  ASSERT_EQ(entries.size(), 3u);
  std::set<Digest128> keys;
  for (const auto& entry : entries) {
    keys.insert(entry.key);
    EXPECT_EQ(entry.bytes, entry_bytes(entry.key));
    EXPECT_EQ(entry.last_access_ns, mtime_of(entry_file(entry.key, ".entry")));
    EXPECT_EQ(entry.sidecar["api"], "opencl");
    EXPECT_EQ(entry.sidecar["binary_size"], 100 + entry.sidecar["n"].get<std::uint64_t>());
  }
  EXPECT_EQ(keys, (std::set<Digest128>{key_of(0), key_of(1), key_of(2)}));
}

TEST_F(DiskStoreTest, VerifyReportsDamageAndSweepsStaleLeftovers) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 3; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 200), sidecar_of(n)).status, SaveStatus::stored);
  }
  store_test::flip_byte(entry_file(key_of(1), ".entry"), store_test::binary_offset(entry_file(key_of(1), ".entry")));

  const std::int64_t two_hours_ago = now_ns() - 2 * 3600 * kSecond;
  const fs::path stale_tmp = root_ / "tmp" / "123-1-1.bin.tmp";
  const fs::path fresh_tmp = root_ / "tmp" / "123-1-2.bin.tmp";
  write_text(stale_tmp, "x");
  set_mtime(stale_tmp, two_hours_ago);
  write_text(fresh_tmp, "x");  // a live writer's: must survive
  const fs::path old_orphan = entry_file(key_of(20), ".bin");
  const fs::path new_orphan = entry_file(key_of(21), ".bin");
  fs::create_directories(old_orphan.parent_path());
  fs::create_directories(new_orphan.parent_path());
  write_text(old_orphan, "o");
  set_mtime(old_orphan, two_hours_ago);
  write_text(new_orphan, "o");

  auto problems = store->verify(false);
  std::set<std::string> paths;
  for (const auto& problem : problems) paths.insert(problem.path);
  EXPECT_EQ(paths, (std::set<std::string>{entry_file(key_of(1), ".entry").string(), stale_tmp.string(),
                                          old_orphan.string()}));
  for (const auto& problem : problems) {
    if (problem.path == entry_file(key_of(1), ".entry").string()) {
      EXPECT_NE(problem.problem.find("checksum"), std::string::npos) << problem.problem;
    }
  }
  EXPECT_FALSE(fs::exists(stale_tmp));
  EXPECT_FALSE(fs::exists(old_orphan));
  EXPECT_TRUE(fs::exists(fresh_tmp));
  EXPECT_TRUE(fs::exists(new_orphan));
  EXPECT_TRUE(fs::exists(entry_file(key_of(1), ".entry"))) << "verify(false) only reports";

  problems = store->verify(true);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].problem.find("quarantined"), std::string::npos);
  EXPECT_FALSE(fs::exists(entry_file(key_of(1), ".entry")));
  EXPECT_TRUE(store->verify(true).empty());
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
  EXPECT_EQ(store->size().entries, 2u);
}

TEST_F(DiskStoreTest, VerifyRepairsAWrongSizeRecord) {
  auto store = open_store();
  ASSERT_EQ(store->save(key_of(1), binary_of(1, 200), sidecar_of(1)).status, SaveStatus::stored);
  write_text(root_ / "size", store_detail::format_size_record({{5, 5}, false}));
  const auto problems = store->verify(false);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, (root_ / "size").string());
  EXPECT_TRUE(same_size(store->size(), independent_scan(root_)));
}

TEST_F(DiskStoreTest, EvictionSweepsStaleTempFiles) {
  auto store = open_store();
  const fs::path stale_tmp = root_ / "tmp" / "1-1-1.json.tmp";
  fs::create_directories(stale_tmp.parent_path());  // left by an earlier process (opening makes no tmp/)
  write_text(stale_tmp, "x");
  set_mtime(stale_tmp, now_ns() - 2 * 3600 * kSecond);
  store->evict(std::numeric_limits<std::uint64_t>::max(), 0);
  EXPECT_FALSE(fs::exists(stale_tmp));
}

TEST_F(DiskStoreTest, ClearRemovesEverythingAndResetsAccounting) {
  auto store = open_store();
  for (std::uint64_t n = 0; n < 6; ++n) {
    ASSERT_EQ(store->save(key_of(n), binary_of(n, 300), sidecar_of(n)).status, SaveStatus::stored);
  }
  store->quarantine(key_of(0), "test");
  const SizeInfo before = store->size();
  const EvictionReport report = store->clear();
  EXPECT_EQ(report.removed_entries, 5u);
  EXPECT_EQ(report.removed_bytes, before.bytes);
  EXPECT_TRUE(same_size(store->size(), {0, 0}));
  EXPECT_TRUE(same_size(independent_scan(root_), {0, 0}));
  EXPECT_TRUE(store->list().empty());
  EXPECT_TRUE(files_in(root_ / "quarantine").empty());
  // Still usable afterwards: the shard folders come back on demand.
  ASSERT_EQ(store->save(key_of(1), binary_of(1, 300), sidecar_of(1)).status, SaveStatus::stored);
  EXPECT_EQ(store->load(key_of(1)).status, LoadStatus::hit);
}

}  // namespace
}  // namespace jitcache

// Issue 19: the shim maps libcrypto, libhiredis and libcurl (the pack and remote tiers, in
// libjitcache-tiers.so) only into a process that set JITCACHE_PACKS or JITCACHE_REMOTE. The app
// reads its own /proc/self/maps after its builds under the shim (opencl_two_builds
// --print-mapped-libraries).
// Without the tiers' library next to the shim, those tiers are off with one warning each and the
// app runs, cached by the disk store.
#include <gtest/gtest.h>

#include "../elf_segments.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include <elf.h>
#include <unistd.h>

#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;



class TierLoading : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path cache = tmp / "cache";
  int runs = 0;

  CachedRun run_app(const std::string& shim, std::map<std::string, std::string> extra = {}) {
    fs::path trace_dir = tmp / ("traces-" + std::to_string(++runs));
    RunOptions options;
    options.env = {{"LD_PRELOAD", shim},         {"JITCACHE_DIR", cache.string()}, {"JITCACHE_TRACE", "1"},
                   {"JITCACHE_TRACE_DIR", trace_dir.string()}, {"JITCACHE_CAPTURE", "build"},
                   {"JITCACHE_LOG", "warn"},     {"POCL_KERNEL_CACHE", "0"}};
    for (auto& [name, value] : extra) options.env[name] = value;
    options.unset = {"JITCACHE_PACKS", "JITCACHE_PACK_KEYS", "JITCACHE_REMOTE", "OPENCL_LAYERS"};
    return run_traced(app(), options, trace_dir);
  }

  static std::vector<std::string> app() { return {TWO_BUILDS_APP, "--print-mapped-libraries"}; }

  std::string plain_sums() {
    RunResult plain = run_plain(app());
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    return sums(plain.out);
  }

  // What the app computed: its output without the "mapped: " lines.
  static std::string sums(const std::string& out) { return out.substr(0, out.find("mapped: ")); }

  // The mapped libraries the app printed whose file name holds `name`.
  static std::vector<std::string> mapped(const RunResult& result, const std::string& name) {
    std::vector<std::string> found;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("mapped: ", 0) != 0) continue;
      if (fs::path(line.substr(8)).filename().string().find(name) != std::string::npos) found.push_back(line);
    }
    return found;
  }

  static int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  }
};

TEST_F(TierLoading, AProcessWithoutPacksOrRemoteMapsNeitherLibcryptoNorHiredis) {
  const std::string plain = plain_sums();
  CachedRun cold = run_app(JITCACHE_LIBRARY);
  CachedRun warm = run_app(JITCACHE_LIBRARY);
  for (const CachedRun* run : {&cold, &warm}) {
    ASSERT_EQ(run->result.exit_code, 0) << run->result.err;
    EXPECT_EQ(sums(run->result.out), plain);
    EXPECT_EQ(mapped(run->result, "libjitcache.so").size(), 1u) << run->result.out;  // the probe sees the shim
    EXPECT_EQ(mapped(run->result, "libcrypto"), std::vector<std::string>{}) << run->result.out;
    EXPECT_EQ(mapped(run->result, "libhiredis"), std::vector<std::string>{}) << run->result.out;
    EXPECT_EQ(mapped(run->result, "libcurl"), std::vector<std::string>{}) << run->result.out;
    EXPECT_EQ(mapped(run->result, "libjitcache-tiers"), std::vector<std::string>{}) << run->result.out;
    EXPECT_EQ(count(run->result.err, "jitcache: warning"), 0) << run->result.err;
  }
  EXPECT_EQ(cold.verdicts["miss"], 2);
  EXPECT_EQ(warm.verdicts["hit"], 2);  // the engine ran (a disk hit) without them
}

TEST_F(TierLoading, SettingPacksOrARemoteLoadsThemPrivately) {
  const std::string plain = plain_sums();
  const std::map<std::string, std::map<std::string, std::string>> settings = {
      {"packs", {{"JITCACHE_PACKS", (tmp / "absent.jcpack").string()}}},
      {"remote", {{"JITCACHE_REMOTE", "redis://127.0.0.1:1"}}},  // nothing listens on port 1
      {"http remote", {{"JITCACHE_REMOTE", "http://127.0.0.1:1/cache"}}}};
  for (const auto& [tier, env] : settings) {
    CachedRun run = run_app(JITCACHE_LIBRARY, env);
    ASSERT_EQ(run.result.exit_code, 0) << tier << ": " << run.result.err;
    EXPECT_EQ(sums(run.result.out), plain) << tier;
    EXPECT_EQ(mapped(run.result, "libjitcache-tiers.so").size(), 1u) << tier << ": " << run.result.out;
    EXPECT_EQ(mapped(run.result, "libcrypto").size(), 1u) << tier << ": " << run.result.out;
    EXPECT_EQ(mapped(run.result, "libhiredis").size(), 1u) << tier << ": " << run.result.out;
    EXPECT_EQ(mapped(run.result, "libcurl").size(), 1u) << tier << ": " << run.result.out;
  }
}

// Each way the library next to the shim can be unusable, in a folder the rule accepts for code
// (store/files/trusted_file.hpp), so that the file's own check decides. Issue 28 item 3: a truncated one
// made the loader fault (SIGBUS) in every process that set JITCACHE_PACKS or JITCACHE_REMOTE, even
// /bin/true, while `jitcache doctor` said "ok"; one another user may write ran their code.
TEST_F(TierLoading, WithoutAUsableTiersLibraryPacksAndRemoteAreOffWithOneWarningEachAndTheDiskServes) {
  std::string untrusted;
  const fs::path parent = trusted_temp_parent(&untrusted);
  if (parent.empty()) GTEST_SKIP() << untrusted;
  TempDir trusted(parent);
  const std::string plain = plain_sums();
  const std::map<std::string, std::string> both = {{"JITCACHE_PACKS", (tmp / "absent.jcpack").string()},
                                                   {"JITCACHE_REMOTE", "redis://127.0.0.1:1"}};
  const std::string real = read_text(fs::path(JITCACHE_LIBRARY).parent_path() / "libjitcache-tiers.so");
  // The shim alone in a folder, then next to a tiers' library that must not be loaded, and what
  // each warning (and the doctor) says about it.
  const std::map<std::string, std::string> cases = {{"missing", "No such file"},
                                                    {"damaged", "not an ELF file"},
                                                    {"truncated", "truncated"},
                                                    {"writable", "writable by group or others (mode 0666)"},
                                                    {"foreign", "owned by uid 65534"}};
  int n = 0;
  for (const auto& [plugin, said] : cases) {
    SCOPED_TRACE(plugin);
    fs::path folder = trusted / ("shim-" + std::to_string(++n));  // no case's words in the paths
    fs::create_directories(folder);
    fs::copy_file(JITCACHE_LIBRARY, folder / "libjitcache.so");
    const fs::path tiers = folder / "libjitcache-tiers.so";
    if (plugin == "damaged") write_text(tiers, "not a shared object");
    if (plugin == "truncated") write_text(tiers, real.substr(0, mapped_end(real) / 2));
    if (plugin == "writable" || plugin == "foreign") write_text(tiers, real);
    if (plugin == "writable") fs::permissions(tiers, fs::perms(0666));
    if (plugin == "foreign") {
      ASSERT_EQ(::chown(tiers.c_str(), 65534, 65534), 0);
    }
    const std::string shim = (folder / "libjitcache.so").string();

    RunOptions bare;
    bare.env = both;
    bare.env["LD_PRELOAD"] = shim;
    RunResult tiny = run({"/bin/true"}, bare);
    EXPECT_EQ(tiny.exit_code, 0) << tiny.err;

    fs::remove_all(cache);
    CachedRun cold = run_app(shim, both);
    CachedRun warm = run_app(shim, both);
    for (const CachedRun* run : {&cold, &warm}) {
      ASSERT_EQ(run->result.exit_code, 0) << run->result.err;
      EXPECT_EQ(sums(run->result.out), plain);
      EXPECT_EQ(count(run->result.err, "jitcache: warning"), 2) << run->result.err;
      EXPECT_EQ(count(run->result.err, "running without packs (JITCACHE_PACKS ignored): "), 1) << run->result.err;
      EXPECT_EQ(count(run->result.err, "running without the remote tier: "), 1) << run->result.err;
      EXPECT_EQ(count(run->result.err, "libjitcache-tiers.so"), 2) << run->result.err;  // each names what failed
      EXPECT_EQ(count(run->result.err, said), 2) << run->result.err;
      EXPECT_EQ(mapped(run->result, "libcrypto"), std::vector<std::string>{}) << run->result.out;
      EXPECT_EQ(mapped(run->result, "libjitcache-tiers"), std::vector<std::string>{}) << run->result.out;
    }
    EXPECT_EQ(cold.verdicts["miss"], 2);
    ASSERT_EQ(warm.traces.size(), 2u);
    for (const auto& trace : warm.traces) {
      EXPECT_EQ(trace["verdict"], "hit");
      EXPECT_EQ(trace["tier"], "disk");
    }

    // The doctor's verdict is the shim's.
    RunOptions tool;
    tool.env = {{"JITCACHE_LIBRARY", shim}, {"JITCACHE_DIR", cache.string()}};
    tool.unset = {"LD_PRELOAD"};
    RunResult doctor = run({JITCACHE_TOOL, "doctor", "--json"}, tool);
    nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << doctor.out << doctor.err;
    int checks = 0;
    for (const nlohmann::json& check : report["checks"]) {
      if (check["check"] != "tiers library") continue;
      ++checks;
      EXPECT_EQ(check["status"], plugin == "missing" ? "warn" : "fail") << check;
      EXPECT_NE(check["detail"].get<std::string>().find(plugin == "missing" ? "is missing" : said), std::string::npos) << check;
    }
    EXPECT_EQ(checks, 1) << doctor.out;
  }
}

// A tiers' library in a folder others can write (mode 0777, no sticky bit) is refused, whoever owns it.
TEST_F(TierLoading, ATiersLibraryInAFolderOthersCanWriteIsNotLoaded) {
  fs::path folder = tmp / "shared";
  fs::create_directories(folder);
  fs::copy_file(JITCACHE_LIBRARY, folder / "libjitcache.so");
  fs::copy_file(fs::path(JITCACHE_LIBRARY).parent_path() / "libjitcache-tiers.so", folder / "libjitcache-tiers.so");
  fs::permissions(folder, fs::perms(0777));  // anyone may replace the library in it
  CachedRun run = run_app((folder / "libjitcache.so").string(), {{"JITCACHE_REMOTE", "redis://127.0.0.1:1"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(sums(run.result.out), plain_sums());
  EXPECT_EQ(count(run.result.err, "running without the remote tier: "), 1) << run.result.err;
  EXPECT_EQ(count(run.result.err, "is writable by other users (mode 777, no sticky bit)"), 1) << run.result.err;
  EXPECT_EQ(mapped(run.result, "libjitcache-tiers"), std::vector<std::string>{}) << run.result.out;
}

}  // namespace
}  // namespace jitcache::testing

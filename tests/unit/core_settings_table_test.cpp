// The one table of settings (core/settings.cpp): every row is read into a typed field or handed to
// its remote scheme, so no code reads a setting by name; a bad value of any kind is one problem and
// the row's default.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <type_traits>
#include <variant>

#include "core/settings.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache {
namespace {

bool points_somewhere(const SettingField& field) {
  return std::visit(
      [](const auto& kind) {
        using Kind = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<Kind, SchemeOwn>) return true;
        else if constexpr (std::is_same_v<Kind, Choice>) return kind.read != nullptr;
        else return kind.field != nullptr;
      },
      field);
}

bool named_by_a_scheme(std::string_view key) {
  for (const RemoteScheme* scheme : remote_schemes()) {
    if (std::find(scheme->settings.begin(), scheme->settings.end(), key) != scheme->settings.end()) return true;
  }
  return false;
}

TEST(SettingsTable, EveryRowIsReadIntoAFieldOrByItsScheme) {
  for (const SettingDefinition& row : setting_definitions()) {
    EXPECT_TRUE(points_somewhere(row.field)) << row.key << " has no field";
    // Text only a scheme reads must be one a scheme names: else nothing reads it.
    if (std::holds_alternative<SchemeOwn>(row.field)) {
      EXPECT_TRUE(named_by_a_scheme(row.key)) << row.key;
    }
  }
  // And what a scheme names is its own row (or a secret): a field would mean two readers.
  for (const RemoteScheme* scheme : remote_schemes()) {
    for (std::string_view key : scheme->settings) {
      const auto& rows = setting_definitions();
      auto row = std::find_if(rows.begin(), rows.end(), [&](const SettingDefinition& d) { return d.key == key; });
      ASSERT_NE(row, rows.end()) << key;
      EXPECT_TRUE(std::holds_alternative<SchemeOwn>(row->field) || std::holds_alternative<Secret>(row->field)) << key;
    }
  }
}

class SettingsValues : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("JITCACHE_DIR", (std::filesystem::temp_directory_path() / "jitcache-settings-no-root").c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : set_) ::unsetenv(name);
    ::unsetenv("JITCACHE_DIR");
  }
  void set(const char* name, const char* value) {
    ::setenv(name, value, 1);
    set_.push_back(name);
  }
  static std::string problems_of(const Settings& settings) {
    std::string all;
    for (const std::string& problem : settings.problems) all += problem + "\n";
    return all;
  }
  std::vector<const char*> set_;
};

TEST_F(SettingsValues, TheDefaultsOfTheTableReachTheFields) {
  const Settings settings = load_settings();
  EXPECT_TRUE(settings.problems.empty()) << problems_of(settings);
  EXPECT_EQ(settings.remote_timeout_ms, 200u);
  EXPECT_EQ(settings.remote_connect_timeout_ms, 50u);
  EXPECT_EQ(settings.remote_lease_wait_s, 60u);
  EXPECT_EQ(settings.remote_backfill, RemoteBackfill::signed_records);
  EXPECT_EQ(settings.remote_prefix, "jitcache");
  EXPECT_EQ(settings.helper_start, HelperStart::one_at_a_time);
  EXPECT_EQ(settings.helper_time_limit_s, 600u);
  EXPECT_TRUE(settings.store_inputs);
  EXPECT_EQ(settings.trace_dir, settings.dir / "traces");
}

TEST_F(SettingsValues, ChoicesAndBoundsAreReadTyped) {
  set("JITCACHE_CAPTURE", "release");
  set("JITCACHE_HELPER_START", "at_exit");
  set("JITCACHE_REMOTE_BACKFILL", "all");
  set("JITCACHE_REMOTE_READ_ONLY", "yes");
  set("JITCACHE_REMOTE_TIMEOUT_MS", "1500");
  set("JITCACHE_LOG", "info");
  set("JITCACHE_RECAPTURE", "auto");
  const Settings settings = load_settings();
  EXPECT_TRUE(settings.problems.empty()) << problems_of(settings);
  EXPECT_EQ(settings.capture, Capture::release);
  EXPECT_EQ(settings.helper_start, HelperStart::at_exit);
  EXPECT_EQ(settings.remote_backfill, RemoteBackfill::all);
  EXPECT_TRUE(settings.remote_read_only);
  EXPECT_EQ(settings.remote_timeout_ms, 1500u);
  EXPECT_EQ(settings.log_level, 2);
  EXPECT_EQ(settings.recapture, Recapture::lazy_drivers);
}

// A misspelled choice is a problem that names the words, and the default applies.
TEST_F(SettingsValues, ABadValueIsOneProblemAndTheDefault) {
  set("JITCACHE_CAPTURE", "afterwards");
  set("JITCACHE_HELPER_START", "now");
  set("JITCACHE_REMOTE_BACKFILL", "some");
  set("JITCACHE_REMOTE_READ_ONLY", "maybe");
  set("JITCACHE_REMOTE_LEASE_WAIT", "soon");
  const Settings settings = load_settings();
  const std::string problems = problems_of(settings);
  EXPECT_EQ(settings.problems.size(), 5u) << problems;
  EXPECT_NE(problems.find("capture: not build, release, helper or auto: 'afterwards'"), std::string::npos) << problems;
  EXPECT_NE(problems.find("helper_start: not one_at_a_time or at_exit: 'now'"), std::string::npos) << problems;
  EXPECT_NE(problems.find("remote_backfill: not signed, all or off: 'some'"), std::string::npos) << problems;
  EXPECT_EQ(settings.helper_start, HelperStart::one_at_a_time);
  EXPECT_EQ(settings.remote_backfill, RemoteBackfill::signed_records);
  EXPECT_FALSE(settings.remote_read_only);
  EXPECT_EQ(settings.remote_lease_wait_s, 60u);
}

}  // namespace
}  // namespace jitcache

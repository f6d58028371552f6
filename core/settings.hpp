// The one table of settings: name, environment variable, config-file key, default, how it is read,
// what it does. Precedence: environment > <root>/jitcache.conf > default. docs/settings.md's table
// is generated from it (`jitcache generate settings-table`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace jitcache {


enum class SettingOrigin { default_value, config_file, environment };
const char* to_string(SettingOrigin origin);

struct RawSetting {
  std::string value;
  SettingOrigin origin = SettingOrigin::default_value;
};

// capture: when a missed build's binary is read and stored (docs/settings.md, "capture").
enum class Capture {
  build,    // right after the build, in the app
  release,  // when the app releases the program
  helper,   // by a detached `jitcache replay` (capture/)
  automatic,  // the helper on drivers whose binary read is costly (PoCL), else build
};
// recapture: when a served program's binary is read again (docs/settings.md, "recapture").
enum class Recapture { off, lazy_drivers, always };
// helper_start: when an app's capture helper runs.
enum class HelperStart { one_at_a_time, at_exit };
// remote_backfill: which later remote's hits are copied into the earlier remotes.
enum class RemoteBackfill { signed_records, all, off };

struct Settings {
  std::filesystem::path dir;
  bool disabled = false;
  std::uint64_t max_size = 0;
  std::uint64_t max_age_s = 0;
  std::uint64_t min_entry_size = 0;
  std::uint64_t max_entry_size = 0;
  bool read_only = false;
  std::uint64_t memory_max_size = 0;
  bool trace = false;
  std::filesystem::path trace_dir;
  std::uint64_t trace_max_files = 0;  // trace retention (0: no bound each)
  std::uint64_t trace_max_size = 0;
  std::uint64_t trace_max_age_s = 0;
  int log_level = 0;  // 0: one warning per process, 1: every warning, 2: info, 3: debug
  std::string env_patterns;
  std::string remote;
  bool remote_read_only = false;
  RemoteBackfill remote_backfill = RemoteBackfill::signed_records;
  std::string remote_prefix;
  std::string remote_ca_file;  // as given; trusted_remote_ca_file checks it
  std::uint64_t remote_connect_timeout_ms = 0;
  std::uint64_t remote_timeout_ms = 0;
  std::uint64_t remote_backoff_s = 0;
  std::uint64_t remote_lease_ttl_s = 0;
  std::uint64_t remote_lease_wait_s = 0;
  std::string remote_hmac_key;      // Secret rows: shown as *** by `config`, logs and doctor
  std::string remote_bearer_token;
  std::string remote_s3_secret_access_key;
  std::string remote_s3_session_token;
  std::uint64_t flush_timeout_ms = 0;
  std::uint64_t memory_max_entries = 0;
  std::uint64_t wait_ms = 0;  // single-flight: longest wait for another builder of the same key
  Capture capture = Capture::build;
  std::string packs;      // JITCACHE_PACKS: ':'-separated pack files and folders
  std::string pack_keys;  // JITCACHE_PACK_KEYS: ':'-separated trusted public key files
  std::string label;      // JITCACHE_LABEL: a human name for the entries this process builds
  std::uint64_t helper_time_limit_s = 0;
  std::uint64_t capture_wait_s = 0;  // how long tools wait for captures in flight
  // recapture: refresh served entries with the code the driver generated lazily (docs/settings.md)
  Recapture recapture = Recapture::off;
  HelperStart helper_start = HelperStart::one_at_a_time;
  bool store_inputs = false;  // record what a rebuild needs next to each entry (`jitcache warm`)

  std::map<std::string, RawSetting> raw;  // by key: effective text and where it came from
  std::vector<std::string> problems;      // unparsable values (the default was used instead)
};

// Where load_settings puts a setting of the table, read as its kind says; a value that does not
// parse is a problem, and the default is used. Every row has one: no setting is read by name
// outside the table (the fields' initial values above are placeholders, the defaults are the rows').
struct Flag {
  bool Settings::*field;
};
struct Size {  // "1G", "512MiB", "100k", "12345": bytes
  std::uint64_t Settings::*field;
};
struct Count {  // a plain number (entries, files, milliseconds); read like a size
  std::uint64_t Settings::*field;
};
struct Milliseconds {  // a number of milliseconds within [least, most]: a bound of a call, never 0
  std::uint64_t Settings::*field;
  std::uint64_t least = 1;
  std::uint64_t most = 600000;
};
struct Duration {  // "7d", "12h", "30m", "45s", "90": seconds
  std::uint64_t Settings::*field;
  bool positive = false;  // 0 is refused too
};
struct Text {
  std::string Settings::*field;
};
struct Secret {  // text that is never shown: redacted_setting gives "***"
  std::string Settings::*field;
};
struct Folder {  // a path; empty stays empty (its user then takes the default folder it documents)
  std::filesystem::path Settings::*field;
};
struct Choice {  // one of fixed words: `read` sets the field and says whether the text was one
  const char* expected;  // for the problem: "build, release, helper or auto"
  bool (*read)(std::string_view text, Settings* settings);
};
struct SchemeOwn {};  // text only a remote scheme reads (RemoteScheme::settings lists it)
using SettingField =
    std::variant<Flag, Size, Count, Milliseconds, Duration, Text, Secret, Folder, Choice, SchemeOwn>;

// One row of the one table of settings (core/settings.cpp): load_settings reads it, `jitcache
// config` shows it, `jitcache generate` writes docs/settings.md's table and the man pages from it.
struct SettingDefinition {
  const char* key;            // config-file key, e.g. "max_size"
  const char* env;            // environment variable, e.g. "JITCACHE_MAX_SIZE"
  const char* default_value;  // as text, parsed like any other source
  const char* doc;            // what it does: one line of Markdown (links relative to docs/)
  SettingField field;
  const char* doc_default = nullptr;  // the default as the docs say it, where default_value is not it
  const char* also_env = nullptr;     // a second variable read too, under the first (BinaryCacheTrace)
};

const std::vector<SettingDefinition>& setting_definitions();

namespace fileops {
class Dir;
}

// Reads the environment and the config file under the resolved root. Never throws.
// `checked_root`, when given, receives the root as opened and checked to read the config file
// (closed when it was refused or missing), to be handed to DiskStore::open: one trust check of
// the root per process, and the config and the store read through the same directory fd.
Settings load_settings(fileops::Dir* checked_root = nullptr);

// A setting's value as it may be shown (jitcache config, logs): a Secret row's value becomes "***"
// and a remote URL loses its password. Every other value is returned as is.
std::string redacted_setting(std::string_view key, std::string_view value);

// Parsers shared with the tool: "1G", "512MiB", "100k", "12345" -> bytes; "7d", "12h", "30m",
// "45s", "90" -> seconds; "1/true/yes/on" and "0/false/no/off".
std::optional<std::uint64_t> parse_size(std::string_view text);
std::optional<std::uint64_t> parse_duration_s(std::string_view text);
std::optional<bool> parse_bool(std::string_view text);

}  // namespace jitcache

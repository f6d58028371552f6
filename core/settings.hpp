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

// recapture: when a served program's binary is read again (docs/settings.md, "recapture").
enum class Recapture { off, lazy_drivers, always };

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
  std::string remote_hmac_key;      // Secret rows: shown as *** by `config`, logs and doctor
  std::string remote_bearer_token;
  std::string remote_s3_secret_access_key;
  std::string remote_s3_session_token;
  std::uint64_t flush_timeout_ms = 0;
  std::uint64_t memory_max_entries = 0;
  std::uint64_t wait_ms = 0;  // single-flight: longest wait for another builder of the same key
  bool capture_at_release = false;  // capture = release (docs/settings.md, "capture")
  std::string packs;      // JITCACHE_PACKS: ':'-separated pack files and folders
  std::string pack_keys;  // JITCACHE_PACK_KEYS: ':'-separated trusted public key files
  std::string label;      // JITCACHE_LABEL: a human name for the entries this process builds
  bool capture_helper = false;      // capture = helper: a detached `jitcache replay` stores the entry
  bool capture_auto = false;        // capture = auto: helper on drivers whose binary read is costly (PoCL)
  std::uint64_t helper_time_limit_s = 600;
  std::uint64_t capture_wait_s = 600;  // how long tools wait for captures in flight
  // recapture: refresh served entries with the code the driver generated lazily (docs/settings.md)
  Recapture recapture = Recapture::off;
  bool helpers_while_running = true;  // helper_start = one_at_a_time (false: at_exit)
  bool store_inputs = true;  // record what a rebuild needs next to each entry (`jitcache warm`)

  std::map<std::string, RawSetting> raw;  // by key: effective text and where it came from
  std::vector<std::string> problems;      // unparsable values (the default was used instead)
};

// Where load_settings puts a setting of the table, read as its kind says; a value that does not
// parse is a problem, and the default is used. Settings read by hand (choices, paths with a
// default of their own, the remote's) have none.
struct Flag {
  bool Settings::*field;
};
struct Size {  // "1G", "512MiB", "100k", "12345": bytes
  std::uint64_t Settings::*field;
};
struct Count {  // a plain number (entries, files, milliseconds); read like a size
  std::uint64_t Settings::*field;
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
using SettingField = std::variant<std::monostate, Flag, Size, Count, Duration, Text, Secret>;

// One row of the one table of settings (core/settings.cpp): load_settings reads it, `jitcache
// config` shows it, `jitcache generate` writes docs/settings.md's table and the man pages from it.
struct SettingDefinition {
  const char* key;            // config-file key, e.g. "max_size"
  const char* env;            // environment variable, e.g. "JITCACHE_MAX_SIZE"
  const char* default_value;  // as text, parsed like any other source
  const char* doc;            // what it does: one line of Markdown (links relative to docs/)
  SettingField field = {};
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

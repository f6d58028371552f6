#include "core/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "core/absolute_paths.hpp"
#include "core/platform.hpp"
#include "hashing/environment.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/root_check.hpp"

namespace jitcache {
namespace {

// The default list of codegen-relevant variables: PoCL's work-group and vectorizer knobs and its
// extra build flags, Intel IGC's debug/option keys, NVIDIA's PTX JIT switches.
// auto: the capture helper on PoCL, inline elsewhere (docs/design-decisions.md). Windows has no
// capture helper: build.
#if defined(_WIN32)
constexpr const char* kDefaultCapture = "build";
#else
constexpr const char* kDefaultCapture = "auto";
#endif

constexpr const char* kDefaultEnvPatterns =
    "POCL_WORK_GROUP_*,POCL_VECTORIZER_*,POCL_EXTRA_BUILD_FLAGS,POCL_CPU_*,POCL_MAX_WORK_GROUP_SIZE,"
    "IGC_*,NEOReadDebugKeys,CUDA_FORCE_PTX_JIT,CUDA_DISABLE_PTX_JIT";

const std::vector<SettingDefinition> kDefinitions = {
    {"dir", "JITCACHE_DIR", "",
     "cache root; empty means $XDG_CACHE_HOME/jitcache, ~/.cache/jitcache, or /tmp/jitcache-<uid>"},
    {"disable", "JITCACHE_DISABLE", "0", "1 turns the cache off: every call goes straight to the driver"},
    {"max_size", "JITCACHE_MAX_SIZE", "1G", "evict least recently used entries above this size (0 = unlimited)"},
    {"max_age", "JITCACHE_MAX_AGE", "0", "evict entries not used for this long (0 = never); e.g. 30d"},
    {"min_entry_size", "JITCACHE_MIN_ENTRY_SIZE", "0", "do not store binaries smaller than this"},
    {"max_entry_size", "JITCACHE_MAX_ENTRY_SIZE", "256M", "do not store binaries larger than this"},
    {"read_only", "JITCACHE_READ_ONLY", "0", "serve hits but never write the store"},
    {"memory_max_size", "JITCACHE_MEM_MAX_SIZE", "64M", "byte budget of the in-process memory tier"},
    {"trace", "JITCACHE_TRACE", "0", "1 writes one BinaryCacheTrace JSON file per lookup"},
    {"trace_dir", "JITCACHE_TRACE_DIR", "", "where traces go; empty means <dir>/traces"},
    {"trace_max_files", "JITCACHE_TRACE_MAX_FILES", "1000", "keep at most this many trace records (0 = no bound)"},
    {"trace_max_size", "JITCACHE_TRACE_MAX_SIZE", "64M",
     "keep trace records and input copies within this many bytes (0 = no bound)"},
    {"trace_max_age", "JITCACHE_TRACE_MAX_AGE", "7d", "remove traces older than this (0 = never); e.g. 1d"},
    {"log", "JITCACHE_LOG", "", "unset: one warning per process; warn, info or debug: more"},
    {"env_keys", "JITCACHE_ENV_KEYS", kDefaultEnvPatterns,
     "environment variables that change codegen and so are part of the key (NAME or PREFIX*)"},
    {"remote", "JITCACHE_REMOTE", "",
     "remote tier URL (redis://host:6379, https://host/path), or several asked in order: url|url"},
    {"flush_timeout", "JITCACHE_FLUSH_TIMEOUT_MS", "5000",
     "at exit, wait at most this long in all for pending stores, traces and the stats lock"},
    {"remote_read_only", "JITCACHE_REMOTE_READ_ONLY", "0", "read the remote but never write it or take build leases"},
    {"remote_hmac_key", "JITCACHE_REMOTE_HMAC_KEY", "",
     "secret shared by the nodes: records are signed, unsigned or forged ones are refused"},
    {"remote_backfill", "JITCACHE_REMOTE_BACKFILL", "signed",
     "several remotes: copy a later remote's hit into the earlier ones: signed (only records whose HMAC tag "
     "verified), all, or off"},
    {"remote_prefix", "JITCACHE_REMOTE_PREFIX", "jitcache", "namespace of this cache's keys on the server"},
    {"remote_bearer_token", "JITCACHE_REMOTE_BEARER_TOKEN", "",
     "HTTP(S) remotes: sent as \"Authorization: Bearer <token>\" (instead of the URL's user:password)"},
    {"remote_ca_file", "JITCACHE_REMOTE_CA_FILE", "",
     "HTTPS remotes: PEM file of the certificate authorities to trust (default: the system's)"},
    {"remote_connect_timeout", "JITCACHE_REMOTE_CONNECT_TIMEOUT_MS", "50",
     "bound on name resolution + connecting to the remote (ms, 1..600000)"},
    {"remote_timeout", "JITCACHE_REMOTE_TIMEOUT_MS", "200",
     "with remote_connect_timeout, the total bound of every remote call (ms, 1..600000)"},
    {"remote_backoff", "JITCACHE_REMOTE_BACKOFF", "30s", "after a remote timeout or error, skip the remote this long"},
    {"remote_lease_ttl", "JITCACHE_REMOTE_LEASE_TTL", "60s", "a build lease expires after this (a crashed builder)"},
    {"remote_lease_wait", "JITCACHE_REMOTE_LEASE_WAIT", "60s",
     "longest wait for another node's build of the same key before building here"},
    {"memory_max_entries", "JITCACHE_MEM_MAX_ENTRIES", "256", "entry cap of the in-process memory tier"},
    {"wait", "JITCACHE_WAIT_MS", "30000",
     "wait at most this many ms for another thread or process building the same key, then build"},
    {"capture", "JITCACHE_CAPTURE", kDefaultCapture,
     "when a missed build's binary is read and stored: build (right after it), release (at the "
     "program's last release or exit, unless someone waits for it), helper (never in the app: a "
     "detached `jitcache` process rebuilds the recorded inputs and stores them) or auto (helper on "
     "PoCL, build elsewhere)"},
    {"helper_time_limit", "JITCACHE_HELPER_TIME_LIMIT", "10m", "a capture helper's build of one program is stopped after this much CPU time (or six times as long in wall time)"},
    {"helper_start", "JITCACHE_HELPER_START", "one_at_a_time",
     "when an app's capture helper runs: one_at_a_time (from the app's first miss, one program at a "
     "time, while the app runs and after it exits) or at_exit (only after the app exits)"},
    {"capture_wait", "JITCACHE_CAPTURE_WAIT", "10m",
     "how long `jitcache pack create` (and `jitcache wait` without --timeout) waits for captures "
     "still in flight"},
    {"store_inputs", "JITCACHE_STORE_INPUTS", "1",
     "1 keeps what a rebuild needs (source or IL, options, header contents, spec constants, keyed "
     "variables) in the store for `jitcache warm`; 0 keeps no source byte on disk"},
    {"packs", "JITCACHE_PACKS", "",
     "read-only packs asked after the memory tier, before the disk store: pack files or folders of "
     "*.jcpack, ':'-separated (docs/pack-format.md)"},
    {"recapture", "JITCACHE_RECAPTURE", "0",
     "a hit on an entry stored before the app used its program is rebuilt once and stored when the "
     "app is done with it, with the code the driver generates at first enqueue: auto (on PoCL), "
     "1 (every driver) or 0 (never)"},
    {"label", "JITCACHE_LABEL", "",
     "a human name stored with every entry this process builds (shown by ls/show/explain; a pack filter)"},
    {"pack_keys", "JITCACHE_PACK_KEYS", "",
     "trusted pack signing keys (PEM files, ':'-separated); when set, unsigned packs and packs signed "
     "by other keys are refused"},
};

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* env_or_null(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

std::filesystem::path default_root() {
  return platform::default_cache_root();
}

// Far above any real config; a bigger "config" (a device, a runaway file) is ignored.
constexpr std::uint64_t kMaxConfigBytes = 64 << 10;

// <root>/jitcache.conf, read only from a root the store would accept (a config decides where
// traces go and what the key leaves out: another user's must never apply), through the root's
// fd: a regular file, not a FIFO or device (no hang, no endless read), within the size cap.
std::map<std::string, std::string> read_config_file(const std::filesystem::path& root, fileops::Dir& dir,
                                                    std::vector<std::string>* problems) {
  std::map<std::string, std::string> values;
  std::string why;
  if (open_trusted_root(root, &dir, &why) != RootCheck::accepted) return values;
  fileops::File file;
  std::string text;
  std::error_code error = fileops::File::open_read(dir, "jitcache.conf", &file, kMaxConfigBytes);
  if (!error) error = file.read_all(&text, kMaxConfigBytes);
  if (error == std::errc::no_such_file_or_directory) return values;
  if (error) {
    problems->push_back("config file " + (root / "jitcache.conf").string() + " not read: " +
                        (error == std::errc::file_too_large ? "larger than 64 KiB" : error.message()));
    return values;
  }
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    std::size_t equals = text.find('=');
    if (equals == std::string::npos) continue;
    values[trim(text.substr(0, equals))] = trim(text.substr(equals + 1));
  }
  return values;
}

int parse_log_level(std::string_view text) {
  std::string level = lowercase(trim(text));
  if (level.empty() || level == "0") return 0;
  if (level == "debug" || level == "3") return 3;
  if (level == "info" || level == "2") return 2;
  return 1;  // "warn", "1", or anything else that asks for logging
}

}  // namespace

const std::vector<SettingDefinition>& setting_definitions() { return kDefinitions; }

const char* to_string(SettingOrigin origin) {
  switch (origin) {
    case SettingOrigin::default_value: return "default";
    case SettingOrigin::config_file: return "file";
    case SettingOrigin::environment: return "env";
  }
  return "?";
}

namespace {

// "scheme:" (RFC 3986: a letter, then letters, digits, '+', '-', '.').
bool starts_with_scheme(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == 0 || colon == std::string_view::npos || !std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text.substr(0, colon)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

// One URL: [scheme://][user[:password]@]rest. Credentials end at the last '@' before the first
// '/', as the URL parser (store/remote_api/remote_url.cpp) reads them, so a raw '@' in a password is hidden
// too and an '@' in a path is not taken for one. Without a ':' the one part is the password.
std::string redacted_url(std::string_view value) {
  const std::size_t scheme = value.find("://");
  const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t at = value.substr(0, value.find('/', start)).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(value);
  const std::string_view credentials = value.substr(start, at - start);
  const std::size_t colon = credentials.find(':');
  const std::string user = colon == std::string_view::npos ? "" : std::string(credentials.substr(0, colon));
  return std::string(value.substr(0, start)) + user + ":***" + std::string(value.substr(at));
}

// env_keys = '*' keys the whole environment: with a remote, every variable (a proxy, a CI job's
// credentials under names no rule knows) would go to a server others read (issue 36.6). The bare
// '*' is dropped there, with one warning; names and prefixes stay.
std::string without_bare_star_beside_a_remote(const std::string& patterns, const std::string& remote,
                                              std::vector<std::string>* problems) {
  if (remote.empty()) return patterns;
  std::vector<std::string> kept = parse_env_patterns(patterns);
  const auto star = std::remove(kept.begin(), kept.end(), std::string("*"));
  if (star == kept.end()) return patterns;
  kept.erase(star, kept.end());
  problems->push_back("env_keys: a bare '*' with a remote would send every environment variable to it; '*' "
                      "ignored (name the variables, or their prefixes)");
  std::string joined;
  for (const std::string& pattern : kept) joined += (joined.empty() ? "" : ",") + pattern;
  return joined;
}

}  // namespace

std::string redacted_setting(std::string_view key, std::string_view value) {
  if (value.empty()) return std::string(value);
  if (key == "remote_hmac_key" || key == "remote_bearer_token") return "***";
  if (key != "remote") return std::string(value);
  // Each URL of the list on its own (store/remote_api/remote_url.hpp: '|' or white space between them). A
  // piece that is no URL means the list was cut inside one, at a raw '|' or blank in a password
  // (the parser refuses such a list): then the whole value is hidden as one URL, never a piece.
  std::string out;
  for (std::size_t start = 0; start <= value.size();) {
    std::size_t end = std::min(value.find_first_of("| \t\n\r", start), value.size());
    const std::string_view piece = value.substr(start, end - start);
    if (!piece.empty() && !starts_with_scheme(piece)) return redacted_url(value);
    out += redacted_url(piece);
    if (end < value.size()) out += value[end];
    start = end + 1;
  }
  return out;
}

namespace {
struct Unit {
  std::string_view name;
  std::uint64_t factor;
};
// Tables, not maps built per call: every process parses a dozen of these at its first build.
constexpr Unit kSizeUnits[] = {{"", 1}, {"b", 1}, {"k", 1ull << 10}, {"m", 1ull << 20}, {"g", 1ull << 30}, {"t", 1ull << 40}};
constexpr Unit kDurationUnits[] = {{"", 1}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};

template <std::size_t N>
std::optional<std::uint64_t> factor_of(const Unit (&units)[N], std::string_view name) {
  for (const Unit& unit : units) {
    if (unit.name == name) return unit.factor;
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::string value = lowercase(trim(text));
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  if (digits == 0 || digits > 18) return std::nullopt;
  std::uint64_t number = std::stoull(value.substr(0, digits));
  std::string unit = trim(value.substr(digits));
  if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();  // "KB", "MiB" -> "k", "mi"
  if (unit.size() > 1 && unit.back() == 'i') unit.pop_back();
  const std::optional<std::uint64_t> factor = factor_of(kSizeUnits, unit);
  if (!factor) return std::nullopt;
  if (number > UINT64_MAX / *factor) return std::nullopt;  // "99999999999T" must not wrap
  return number * *factor;
}

std::optional<std::uint64_t> parse_duration_s(std::string_view text) {
  std::string value = lowercase(trim(text));
  std::size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::uint64_t number = std::stoull(value.substr(0, digits));
  const std::optional<std::uint64_t> factor = factor_of(kDurationUnits, trim(value.substr(digits)));
  if (!factor) return std::nullopt;
  if (number > UINT64_MAX / *factor) return std::nullopt;
  return number * *factor;
}

std::optional<bool> parse_bool(std::string_view text) {
  std::string value = lowercase(trim(text));
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off" || value.empty()) return false;
  return std::nullopt;
}

Settings load_settings(fileops::Dir* checked_root) {
  Settings settings;
  const char* dir_env = env_or_null("JITCACHE_DIR");
  settings.dir = dir_env ? std::filesystem::path(dir_env) : default_root();
  fileops::Dir root;
  std::map<std::string, std::string> file_values = read_config_file(settings.dir, root, &settings.problems);
  if (checked_root != nullptr) *checked_root = std::move(root);

  for (const SettingDefinition& definition : kDefinitions) {
    RawSetting raw{definition.default_value, SettingOrigin::default_value};
    if (auto it = file_values.find(definition.key); it != file_values.end()) {
      raw = {it->second, SettingOrigin::config_file};
    }
    if (const char* env = env_or_null(definition.env)) raw = {env, SettingOrigin::environment};
    settings.raw[definition.key] = raw;
  }
  // BinaryCacheTrace=1 is the spelling other caches' users know.
  if (const char* alias = env_or_null("BinaryCacheTrace"); alias && !env_or_null("JITCACHE_TRACE")) {
    settings.raw["trace"] = {alias, SettingOrigin::environment};
  }
  settings.raw["dir"] = {settings.dir.string(),
                         dir_env ? SettingOrigin::environment : SettingOrigin::default_value};
  // A relative path in jitcache.conf is relative to the folder the file is in (the environment's
  // were made absolute at the start: core/absolute_paths.hpp).
  for (const char* key : {"trace_dir", "packs", "pack_keys"}) {
    RawSetting& raw = settings.raw[key];
    if (raw.origin == SettingOrigin::config_file) {
      raw.value = absolute_paths(raw.value, settings.dir, std::string_view(key) != "trace_dir");
    }
  }

  auto text = [&](const char* key) { return settings.raw[key].value; };
  auto size = [&](const char* key) {
    if (auto value = parse_size(text(key))) return *value;
    settings.problems.push_back(std::string(key) + ": not a size: '" + text(key) + "'");
    for (const auto& d : kDefinitions) if (std::string_view(d.key) == key) return *parse_size(d.default_value);
    return std::uint64_t{0};
  };
  auto flag = [&](const char* key) {
    if (auto value = parse_bool(text(key))) return *value;
    settings.problems.push_back(std::string(key) + ": not a boolean: '" + text(key) + "'");
    return false;
  };

  settings.disabled = flag("disable");
  settings.max_size = size("max_size");
  if (auto age = parse_duration_s(text("max_age"))) {
    settings.max_age_s = *age;
  } else {
    settings.problems.push_back("max_age: not a duration: '" + text("max_age") + "'");
  }
  settings.min_entry_size = size("min_entry_size");
  settings.max_entry_size = size("max_entry_size");
  settings.read_only = flag("read_only");
  settings.memory_max_size = size("memory_max_size");
  settings.trace = flag("trace");
  settings.trace_dir = text("trace_dir").empty() ? settings.dir / "traces" : std::filesystem::path(text("trace_dir"));
  settings.trace_max_files = size("trace_max_files");  // a plain count
  settings.trace_max_size = size("trace_max_size");
  if (auto age = parse_duration_s(text("trace_max_age"))) {
    settings.trace_max_age_s = *age;
  } else {
    settings.problems.push_back("trace_max_age: not a duration: '" + text("trace_max_age") + "'");
    settings.trace_max_age_s = 7 * 86400;
  }
  settings.log_level = parse_log_level(text("log"));
  settings.env_patterns = text("env_keys");
  settings.remote = text("remote");
  settings.env_patterns = without_bare_star_beside_a_remote(settings.env_patterns, settings.remote, &settings.problems);
  settings.packs = text("packs");
  settings.pack_keys = text("pack_keys");
  settings.label = text("label");
  settings.flush_timeout_ms = parse_size(text("flush_timeout")).value_or(5000);  // plain milliseconds
  settings.memory_max_entries = size("memory_max_entries");  // a plain count
  settings.wait_ms = parse_size(text("wait")).value_or(30000);  // plain milliseconds
  settings.store_inputs = flag("store_inputs");
  if (text("capture") == "release") {
    settings.capture_at_release = true;
  } else if (text("capture") == "helper") {
    settings.capture_helper = true;
  } else if (text("capture") == "auto") {
    settings.capture_auto = true;
  } else if (text("capture") != "build") {
    settings.problems.push_back("capture: not build, release, helper or auto: '" + text("capture") + "'");
  }
  if (text("recapture") == "auto") {
    settings.recapture = Recapture::lazy_drivers;
  } else if (auto on = parse_bool(text("recapture"))) {
    settings.recapture = *on ? Recapture::always : Recapture::off;
  } else {
    settings.problems.push_back("recapture: not auto, 1 or 0: '" + text("recapture") + "'");
  }
  if (text("helper_start") == "at_exit") {
    settings.helpers_while_running = false;
  } else if (text("helper_start") != "one_at_a_time") {
    settings.problems.push_back("helper_start: not one_at_a_time or at_exit: '" + text("helper_start") + "'");
  }
  if (auto wait = parse_duration_s(text("capture_wait"))) {
    settings.capture_wait_s = *wait;
  } else {
    settings.problems.push_back("capture_wait: not a duration: '" + text("capture_wait") + "'");
  }
  if (auto limit = parse_duration_s(text("helper_time_limit")); limit && *limit > 0) {
    settings.helper_time_limit_s = *limit;
  } else {
    settings.problems.push_back("helper_time_limit: not a positive duration: '" + text("helper_time_limit") + "'");
  }
  return settings;
}

}  // namespace jitcache

#include "core/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <type_traits>
#include <variant>

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

// The words of a Choice row and what each sets.
template <typename Enum>
struct Word {
  std::string_view text;
  Enum value;
};
constexpr Word<Capture> kCaptures[] = {
    {"build", Capture::build}, {"release", Capture::release}, {"helper", Capture::helper}, {"auto", Capture::automatic}};
constexpr Word<HelperStart> kHelperStarts[] = {{"one_at_a_time", HelperStart::one_at_a_time},
                                               {"at_exit", HelperStart::at_exit}};
constexpr Word<RemoteBackfill> kBackfills[] = {
    {"signed", RemoteBackfill::signed_records}, {"all", RemoteBackfill::all}, {"off", RemoteBackfill::off}};

template <auto field, const auto& words>
bool pick(std::string_view text, Settings* settings) {
  for (const auto& word : words) {
    if (word.text == text) {
      settings->*field = word.value;
      return true;
    }
  }
  return false;
}
bool read_log_level(std::string_view text, Settings* settings);
bool read_recapture(std::string_view text, Settings* settings);

const std::vector<SettingDefinition> kDefinitions = {
    {"dir", "JITCACHE_DIR", "",
     "cache root; created 0700; refused (run uncached, one warning) when it is a symlink, owned by "
     "another user (root's own is accepted read-only: a shared cache), group/other-writable, or below "
     "a folder another user can write (without the sticky bit) or owns; see "
     "[reliability.md](reliability.md#trust-model)",
     Folder{&Settings::dir}, "`$XDG_CACHE_HOME/jitcache`, else `~/.cache/jitcache`, else (no `HOME`) `/tmp/jitcache-<uid>`; "
     "Windows `%LOCALAPPDATA%\\jitcache`"},
    {"disable", "JITCACHE_DISABLE", "0",
     "1 turns the cache off: every call goes straight to the driver",
     Flag{&Settings::disabled}},
    {"max_size", "JITCACHE_MAX_SIZE", "1G",
     "evict least recently used entries above this size, down to 80 % of it; `0` = unlimited (no size "
     "eviction; `max_age` still applies)",
     Size{&Settings::max_size}},
    {"max_age", "JITCACHE_MAX_AGE", "0",
     "evict entries not used for this long (0 = never); `30d`, `12h`, `90m`, `45s`",
     Duration{&Settings::max_age_s}},
    {"min_entry_size", "JITCACHE_MIN_ENTRY_SIZE", "0",
     "do not store binaries smaller than this",
     Size{&Settings::min_entry_size}},
    {"max_entry_size", "JITCACHE_MAX_ENTRY_SIZE", "256M",
     "do not store binaries larger than this",
     Size{&Settings::max_entry_size}},
    {"read_only", "JITCACHE_READ_ONLY", "0",
     "serve hits but never write the store (shared, pre-populated caches; required for a root-owned "
     "one)",
     Flag{&Settings::read_only}},
    {"memory_max_size", "JITCACHE_MEM_MAX_SIZE", "64M",
     "byte budget of the in-process memory tier",
     Size{&Settings::memory_max_size}},
    {"trace", "JITCACHE_TRACE", "0",
     "1 writes one BinaryCacheTrace JSON file per lookup ([format](trace-format.md))",
     Flag{&Settings::trace}, nullptr, "BinaryCacheTrace"},
    {"trace_dir", "JITCACHE_TRACE_DIR", "",
     "where traces go; created 0700; refused (no traces, one warning) when a symlink, owned by another"
     " user or writable by others ([trace-format](trace-format.md))",
     Folder{&Settings::trace_dir}, "`<dir>/traces`"},
    {"trace_max_files", "JITCACHE_TRACE_MAX_FILES", "1000",
     "keep at most this many trace records, oldest removed first (0 = no bound)",
     Count{&Settings::trace_max_files}},
    {"trace_max_size", "JITCACHE_TRACE_MAX_SIZE", "64M",
     "keep trace records and input copies within this many bytes (0 = no bound)",
     Size{&Settings::trace_max_size}},
    {"trace_max_age", "JITCACHE_TRACE_MAX_AGE", "7d",
     "remove traces older than this (0 = never)",
     Duration{&Settings::trace_max_age_s}},
    {"log", "JITCACHE_LOG", "",
     "unset: at most one warning per process on stderr; `warn`, `info`, `debug`: more",
     Choice{"", read_log_level}, "unset"},
    {"env_keys", "JITCACHE_ENV_KEYS", kDefaultEnvPatterns,
     "environment variables that change codegen and so are part of the key",
     Text{&Settings::env_patterns}, "see below"},
    {"remote", "JITCACHE_REMOTE", "",
     "remote tier URL: `redis://[[user]:password@]host[:port][/db]`, "
     "`redis+unix://[[user]:password@]/path.sock[?db=N]` , "
     "`http[s]://[user:password@]host[:port][/path]`, `s3://bucket[/prefix]` ([S3 "
     "remotes](remote.md#s3-remotes)) or `file:///shared/dir` (a directory on a shared "
     "file system, [shared directories](remote.md#shared-directories-file-nfs)); several, asked in "
     "order: `url|url` ([remote.md](remote.md), [several remotes](remote.md#several-remotes))",
     Text{&Settings::remote}},
    {"flush_timeout", "JITCACHE_FLUSH_TIMEOUT_MS", "5000",
     "at exit, wait at most this many milliseconds in all for background stores and traces and the "
     "`stats.lock` / hits locks (a warning says when that was not enough)",
     Count{&Settings::flush_timeout_ms}},
    {"remote_read_only", "JITCACHE_REMOTE_READ_ONLY", "0",
     "read the remote but never write it or take build leases (consumers)",
     Flag{&Settings::remote_read_only}},
    {"remote_hmac_key", "JITCACHE_REMOTE_HMAC_KEY", "",
     "secret shared by the nodes: records are signed with HMAC-SHA256, unsigned or forged ones are "
     "refused",
     Secret{&Settings::remote_hmac_key}},
    {"remote_backfill", "JITCACHE_REMOTE_BACKFILL", "signed",
     "several remotes: a later remote's hit is copied into the earlier ones when its HMAC tag verified"
     " (`signed`), always (`all`: you vouch for every remote of the list to everyone using the earlier"
     " ones) or never (`off`) ([remote.md](remote.md#several-remotes))",
     Choice{"signed, all or off", pick<&Settings::remote_backfill, kBackfills>}},
    {"remote_prefix", "JITCACHE_REMOTE_PREFIX", "jitcache",
     "namespace of this cache's keys on the server (several caches on one server)",
     Text{&Settings::remote_prefix}},
    {"remote_bearer_token", "JITCACHE_REMOTE_BEARER_TOKEN", "",
     "HTTP(S) remotes: sent as `Authorization: Bearer <token>` instead of the URL's `user:password`; "
     "shown as `***` everywhere ([remote.md](remote.md#https-remotes))",
     Secret{&Settings::remote_bearer_token}},
    // S3 remotes' own (store/remote/s3_scheme.hpp); each reads the AWS tools' variable under its own.
    {"remote_s3_endpoint", "JITCACHE_REMOTE_S3_ENDPOINT", "",
     "S3 remotes: the server, `http[s]://host[:port]` (MinIO, Garage, Ceph RGW); empty: AWS, "
     "`https://s3.<region>.amazonaws.com` ([remote.md](remote.md#s3-remotes))",
     SchemeOwn{}, nullptr, "AWS_ENDPOINT_URL"},
    {"remote_s3_region", "JITCACHE_REMOTE_S3_REGION", "",
     "S3 remotes: the region requests are signed for (and AWS's endpoint is in)",
     SchemeOwn{}, "`AWS_DEFAULT_REGION`, else `us-east-1`", "AWS_REGION"},
    {"remote_s3_addressing", "JITCACHE_REMOTE_S3_ADDRESSING", "auto",
     "S3 remotes: `path` (`<endpoint>/<bucket>/<key>`), `virtual` (`<bucket>.<endpoint host>/<key>`) or "
     "`auto`: path-style with `remote_s3_endpoint` set or a bucket name with a dot, else virtual",
     SchemeOwn{}},
    {"remote_s3_access_key_id", "JITCACHE_REMOTE_S3_ACCESS_KEY_ID", "",
     "S3 remotes: the access key id (with `remote_s3_secret_access_key`); unset: the shared credentials "
     "file ([remote.md](remote.md#s3-remotes))",
     SchemeOwn{}, nullptr, "AWS_ACCESS_KEY_ID"},
    {"remote_s3_secret_access_key", "JITCACHE_REMOTE_S3_SECRET_ACCESS_KEY", "",
     "S3 remotes: the secret access key that signs requests (SigV4); shown as `***` everywhere",
     Secret{&Settings::remote_s3_secret_access_key}, nullptr, "AWS_SECRET_ACCESS_KEY"},
    {"remote_s3_session_token", "JITCACHE_REMOTE_S3_SESSION_TOKEN", "",
     "S3 remotes: a temporary session token sent as `x-amz-security-token`; shown as `***` everywhere",
     Secret{&Settings::remote_s3_session_token}, nullptr, "AWS_SESSION_TOKEN"},
    {"remote_s3_profile", "JITCACHE_REMOTE_S3_PROFILE", "default",
     "S3 remotes without keys in the settings: the profile of the shared credentials file "
     "(`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`)",
     SchemeOwn{}, nullptr, "AWS_PROFILE"},
    {"remote_ca_file", "JITCACHE_REMOTE_CA_FILE", "",
     "HTTPS remotes: a PEM file of the certificate authorities to trust (a private CA, a self-signed "
     "server); empty: the system's. It must pass the trust rule of files jitcache believes (owned by "
     "you or root, writable by nobody else, in folders likewise), else the HTTPS remotes are left out "
     "([remote.md](remote.md#https-remotes))",
     Text{&Settings::remote_ca_file}},
    {"remote_connect_timeout", "JITCACHE_REMOTE_CONNECT_TIMEOUT_MS", "50",
     "bound on name resolution + connecting to the remote, in milliseconds (1 to 600000; 0 is refused)",
     Milliseconds{&Settings::remote_connect_timeout_ms}},
    {"remote_timeout", "JITCACHE_REMOTE_TIMEOUT_MS", "200",
     "with `remote_connect_timeout`, the total bound of every remote call (connect, AUTH, the command "
     "and its whole reply; for `file://`, the file system calls, run off the app's thread), in "
     "milliseconds (1 to 600000; 0 is refused) ([remote.md](remote.md#bounded-cost))",
     Milliseconds{&Settings::remote_timeout_ms}},
    {"remote_backoff", "JITCACHE_REMOTE_BACKOFF", "30s",
     "after a remote timeout or error, the remote is not asked for this long",
     Duration{&Settings::remote_backoff_s}},
    {"remote_lease_ttl", "JITCACHE_REMOTE_LEASE_TTL", "60s",
     "a build lease expires after this (covers a builder that crashed)",
     Duration{&Settings::remote_lease_ttl_s}},
    {"remote_lease_wait", "JITCACHE_REMOTE_LEASE_WAIT", "60s",
     "longest wait for another node's build of the same key before building here",
     Duration{&Settings::remote_lease_wait_s}},
    {"memory_max_entries", "JITCACHE_MEM_MAX_ENTRIES", "256",
     "entry cap of the in-process memory tier (`memory_max_size` is its byte budget; either 0 turns it"
     " off)",
     Count{&Settings::memory_max_entries}},
    {"wait", "JITCACHE_WAIT_MS", "30000",
     "single-flight: wait at most this many milliseconds for another thread or process that builds the"
     " same key, then build too ([concurrency](concurrency.md))",
     Count{&Settings::wait_ms}},
    {"capture", "JITCACHE_CAPTURE", kDefaultCapture,
     "when a missed build's binary is read and stored: `build`, `release`, `helper`, `auto` (see "
     "[capture](#capture))",
     Choice{"build, release, helper or auto", pick<&Settings::capture, kCaptures>}, "auto (Windows: build)"},
    {"helper_time_limit", "JITCACHE_HELPER_TIME_LIMIT", "10m",
     "a capture helper's build of one program that has used this much CPU time is stopped (SIGPROF), "
     "and one still running after six times this long in wall time (a driver hung without using CPU): "
     "that entry is built again by the next run",
     Duration{&Settings::helper_time_limit_s, true}},
    {"helper_start", "JITCACHE_HELPER_START", "one_at_a_time",
     "when an app's capture helper runs: `one_at_a_time` (from the app's first miss, one program at a "
     "time, while the app runs and after it exits) or `at_exit` (only after the app exits); see "
     "[capture](#capture)",
     Choice{"one_at_a_time or at_exit", pick<&Settings::helper_start, kHelperStarts>}},
    {"capture_wait", "JITCACHE_CAPTURE_WAIT", "10m",
     "how long `jitcache pack create` (and `jitcache wait` without `--timeout`) waits for captures "
     "still in flight ([cli.md](cli.md#jitcache-wait))",
     Duration{&Settings::capture_wait_s}},
    {"store_inputs", "JITCACHE_STORE_INPUTS", "1",
     "keep what a rebuild needs (source or IL, options, header contents, spec constants, keyed "
     "variables, working directory) in the store, for `jitcache warm` and `capture = helper` "
     "([store-format](store-format.md#recorded-inputs)), and publish it with the entry to the remote, "
     "where other machines' `jitcache warm` finds it "
     "([remote.md](remote.md#recorded-inputs-and-jitcache-warm)); `0`: no source byte is ever written "
     "to the store or sent to the remote (the sidecar then drops its inline source text too)",
     Flag{&Settings::store_inputs}},
    {"packs", "JITCACHE_PACKS", "",
     "read-only packs asked after the memory tier and before the disk store: pack files, or folders "
     "whose `*.jcpack` files are taken in name order, `:`-separated; each must pass the rules of a "
     "read-only shared root ([pack-format.md](pack-format.md#reading-packs-as-a-tier))",
     Text{&Settings::packs}},
    {"recapture", "JITCACHE_RECAPTURE", "0",
     "a hit on an entry that was stored before the app used its program is rebuilt once and stored "
     "when the app is done with it, with the code the driver generates at first enqueue: `auto` (on "
     "PoCL), `1` (every driver), `0` (never) (see [recapture](#recapture))",
     Choice{"auto, 1 or 0", read_recapture}},
    {"label", "JITCACHE_LABEL", "",
     "a human name stored in the sidecar of every entry this process builds (e.g. the app's name); "
     "shown by `ls`, `show`, `explain`, `pack ls`, and a `pack create --label` filter. Not part of the"
     " key",
     Text{&Settings::label}},
    {"pack_keys", "JITCACHE_PACK_KEYS", "",
     "trusted pack signing keys: Ed25519 public keys (or key pairs) in PEM files, `:`-separated. When "
     "set, trust is required: unsigned packs and packs signed by any other key are refused (a listed "
     "file that cannot be read trusts nothing)",
     Text{&Settings::pack_keys}},
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

// Any text is a level: one that is none of these still asks for logging (warnings).
bool read_log_level(std::string_view text, Settings* settings) {
  const std::string level = lowercase(trim(text));
  if (level.empty() || level == "0") settings->log_level = 0;
  else if (level == "debug" || level == "3") settings->log_level = 3;
  else if (level == "info" || level == "2") settings->log_level = 2;
  else settings->log_level = 1;  // "warn", "1", or anything else
  return true;
}

// `auto` or a boolean.
bool read_recapture(std::string_view text, Settings* settings) {
  if (text == "auto") {
    settings->recapture = Recapture::lazy_drivers;
    return true;
  }
  const std::optional<bool> on = parse_bool(text);
  if (on) settings->recapture = *on ? Recapture::always : Recapture::off;
  return on.has_value();
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
// credentials under names no rule knows) would go to a server others read. The bare
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
  const auto& rows = setting_definitions();
  const auto row = std::find_if(rows.begin(), rows.end(), [&](const SettingDefinition& d) { return d.key == key; });
  if (row != rows.end() && std::holds_alternative<Secret>(row->field)) return "***";
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

namespace {

// Reads a setting of the table into its field (SettingField); a value that does not parse is a
// problem, and the default is read instead.
void read_field(const SettingDefinition& definition, Settings* settings) {
  const std::string& text = settings->raw[definition.key].value;
  auto problem = [&](std::string_view what) {
    settings->problems.push_back(std::string(definition.key) + ": not " + std::string(what) + ": '" + text + "'");
  };
  std::visit(
      [&](const auto& field) {
        using Field = std::decay_t<decltype(field)>;
        if constexpr (std::is_same_v<Field, Flag>) {
          std::optional<bool> value = parse_bool(text);
          if (!value) problem("a boolean");
          settings->*field.field = value.value_or(parse_bool(definition.default_value).value_or(false));
        } else if constexpr (std::is_same_v<Field, Size> || std::is_same_v<Field, Count>) {
          std::optional<std::uint64_t> value = parse_size(text);
          if (!value) problem(std::is_same_v<Field, Size> ? "a size" : "a number");
          settings->*field.field = value.value_or(parse_size(definition.default_value).value_or(0));
        } else if constexpr (std::is_same_v<Field, Milliseconds>) {
          std::optional<std::uint64_t> value = parse_size(text);
          if (value && (*value < field.least || *value > field.most)) value.reset();
          if (!value) problem(("milliseconds from " + std::to_string(field.least) + " to " + std::to_string(field.most)).c_str());
          settings->*field.field = value.value_or(parse_size(definition.default_value).value_or(field.least));
        } else if constexpr (std::is_same_v<Field, Duration>) {
          std::optional<std::uint64_t> value = parse_duration_s(text);
          if (value && field.positive && *value == 0) value.reset();
          if (!value) problem(field.positive ? "a positive duration" : "a duration");
          settings->*field.field = value.value_or(parse_duration_s(definition.default_value).value_or(0));
        } else if constexpr (std::is_same_v<Field, Text> || std::is_same_v<Field, Secret>) {
          settings->*field.field = text;
        } else if constexpr (std::is_same_v<Field, Folder>) {
          settings->*field.field = std::filesystem::path(text);
        } else if constexpr (std::is_same_v<Field, Choice>) {
          if (!field.read(text, settings)) {
            problem(field.expected);
            field.read(definition.default_value, settings);
          }
        }  // SchemeOwn: its scheme reads the text (RemoteConfig::scheme_settings)
      },
      definition.field);
}

}  // namespace

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
    // The second spelling is the one other caches' users know (BinaryCacheTrace=1).
    if (const char* also = definition.also_env ? env_or_null(definition.also_env) : nullptr) {
      raw = {also, SettingOrigin::environment};
    }
    if (const char* env = env_or_null(definition.env)) raw = {env, SettingOrigin::environment};
    settings.raw[definition.key] = raw;
  }
  settings.raw["dir"] = {settings.dir.string(),
                         dir_env ? SettingOrigin::environment : SettingOrigin::default_value};
  // A relative path in jitcache.conf is relative to the folder the file is in (the environment's
  // were made absolute at the start: core/absolute_paths.hpp).
  for (const char* key : {"trace_dir", "packs", "pack_keys", "remote_ca_file"}) {
    RawSetting& raw = settings.raw[key];
    if (raw.origin == SettingOrigin::config_file) {
      const bool list = std::string_view(key) == "packs" || std::string_view(key) == "pack_keys";
      raw.value = absolute_paths(raw.value, settings.dir, list);
    }
  }
  for (const SettingDefinition& definition : kDefinitions) read_field(definition, &settings);

  if (settings.trace_dir.empty()) settings.trace_dir = settings.dir / "traces";
  settings.env_patterns = without_bare_star_beside_a_remote(settings.env_patterns, settings.remote, &settings.problems);
  return settings;
}

}  // namespace jitcache

// What the engine's remote tier (core/remote_tier.hpp) asks of a remote, whatever its scheme
// (store/remote/remote_schemes.cpp lists them); core/remote_tier.hpp asks several in order. Every call is bounded,
// never throws, and answers with RemoteStatus's meanings: only `ok` from load() is a usable record
// (framing, key and HMAC checked).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/remote_api/remote_url.hpp"

namespace jitcache {

using Deadline = std::chrono::steady_clock::time_point;

// What the settings say for a remote: where it is (its scheme's endpoint) and the remote_* settings.
struct RemoteConfig {
  std::shared_ptr<const RemoteEndpoint> endpoint;
  std::string prefix = "jitcache";
  std::string hmac_key;  // empty: records are neither signed nor verified
  // The values of the settings of its scheme's own (RemoteScheme::settings), by key: what one
  // scheme needs (HTTP's bearer token) is no field every scheme carries.
  std::map<std::string, std::string, std::less<>> scheme_settings;
  std::string ca_file;       // HTTPS: trust this PEM bundle instead of the system's
  std::chrono::milliseconds connect_timeout{50};
  std::chrono::milliseconds command_timeout{200};
  std::chrono::milliseconds backoff{30000};
  std::chrono::milliseconds lease_ttl{60000};
  std::size_t max_reply_bytes = 64u << 20;  // a larger record is refused unread (error)

  // The value of one of scheme_settings, "" when unset.
  const std::string& scheme_setting(std::string_view key) const;
};

enum class RemoteStatus {
  ok,        // load: hit; save: stored; lease: acquired / exists; release: released
  miss,      // load: no record; lease: another node holds it / none exists
  corrupt,   // load: a record that fails its checksum or framing
  bad_hmac,  // load: a record that fails HMAC verification
  timeout,   // the server did not answer in time (back-off starts)
  error,     // connection or command failed (back-off starts)
  rejected,  // credentials or database refused (the remote is off from now on)
  skipped,   // backing off, disabled, or the connection is busy: nothing was sent
};
const char* to_string(RemoteStatus status);

struct RemoteResult {
  RemoteStatus status = RemoteStatus::skipped;
  std::string reason;  // for everything but ok / miss
  std::string notice;  // whatever the status: something the user should hear of (one warning)
  std::string binary;  // load hit
  nlohmann::json sidecar;

  bool failed() const {
    return status == RemoteStatus::timeout || status == RemoteStatus::error || status == RemoteStatus::rejected;
  }
};

struct RemoteListing;  // store/remote_api/program_summary.hpp (warm reads it; the engine does not)

// One line of `jitcache doctor` about a remote; `aspect` follows the remote's name ("remote 2 signing").
struct RemoteFinding {
  std::string aspect;
  std::string verdict;  // "ok", "warn", "fail", "info"
  std::string detail;
  std::string advice;
};

class RemoteClient {
 public:
  virtual ~RemoteClient() = default;
  virtual RemoteResult load(const Digest128& key) = 0;
  virtual RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) = 0;
  // Cluster-wide single-flight. A remote without leases (HTTP, a read-only directory) answers
  // acquire: ok, exists: miss.
  virtual RemoteResult acquire_lease(const Digest128& key, const std::string& token) = 0;
  virtual RemoteResult lease_exists(const Digest128& key) = 0;
  virtual RemoteResult release_lease(const Digest128& key, const std::string& token) = 0;
  // Recorded inputs and program summaries (store/remote/remote_programs.hpp) for `jitcache warm`.
  virtual RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) = 0;
  virtual RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) = 0;
  // What `jitcache warm` reads: the published program summaries, each checked (a refused one is
  // listed with its reason), and one input record by its digest (ok with it in `binary`).
  virtual RemoteResult list_programs(RemoteListing* listing) = 0;
  virtual RemoteResult fetch_inputs(const Digest128& digest) = 0;
  // The URL without secrets, for logs and doctor.
  virtual std::string describe() const = 0;
  // doctor, once the remote answered: what this scheme can tell of itself (whether the nodes
  // sharing it sign alike, a shared directory's trust and space).
  virtual std::vector<RemoteFinding> check(bool read_only) = 0;
};

// The client of `config.endpoint`, by its scheme.
std::unique_ptr<RemoteClient> open_remote(RemoteConfig config);

// The findings of a remote that cannot be listed: whether this node signs is all there is to say.
std::vector<RemoteFinding> signing_findings(const RemoteConfig& config);

// A result with its status and reason (the clients' shorthand).
RemoteResult remote_result(RemoteStatus status, std::string reason = {});

// A random token naming one lease holder.
std::string new_lease_token();

}  // namespace jitcache

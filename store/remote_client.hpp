// What the engine's remote tier (core/remote_tier.hpp) asks of a remote, whatever it is: Redis
// (store/remote_store.hpp), HTTP (store/http_remote.hpp), a shared directory (store/file_remote.hpp);
// core/remote_tier.hpp asks several in order. Every call is bounded,
// never throws, and answers with RemoteStatus's meanings: only `ok` from load() is a usable record
// (framing, key and HMAC checked).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"
#include "store/remote_store.hpp"

namespace jitcache {

struct RemoteListing;  // store/remote_programs.hpp

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
  // Recorded inputs and program summaries (store/remote_programs.hpp) for `jitcache warm`.
  virtual RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) = 0;
  virtual RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) = 0;
  // What `jitcache warm` reads: the published program summaries, each checked (a refused one is
  // listed with its reason), and one input record by its digest (ok with it in `binary`).
  virtual RemoteResult list_programs(RemoteListing* listing) = 0;
  virtual RemoteResult fetch_inputs(const Digest128& digest) = 0;
  // The URL without secrets, for logs and doctor.
  virtual std::string describe() const = 0;
};

}  // namespace jitcache

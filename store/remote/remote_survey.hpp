// Which kinds of records a remote server holds under this node's prefix: unsigned ones, ones
// signed with this node's HMAC key, ones signed with other keys (store/remote/redis_remote.hpp names
// their namespaces). `jitcache doctor` uses it to say whether the nodes sharing a server sign
// alike: a node that signs never sees the unsigned nodes' records, and the other way round.
// Reads key names only (SCAN), a bounded number of calls, each bounded like every remote call.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>

#include "hashing/digest.hpp"
#include "store/remote/redis_remote.hpp"

namespace jitcache {

struct RemoteSurvey {
  std::size_t unsigned_records = 0;
  std::size_t own_records = 0;    // signed with this node's key (none when it has no key)
  std::size_t other_records = 0;  // signed with a key this node does not have
  std::set<std::string> other_namespaces;  // "<prefix>:hmac-<16 hex>" of those other keys
  std::optional<Digest128> own_sample;     // a record this node would read: to verify one
  std::size_t names_seen = 0;  // key names under the prefix the server returned
  bool complete = false;       // the whole keyspace was walked within `max_calls`
};

// Walks the server's keys with SCAN (MATCH "<prefix>:*"), at most `max_calls` calls. ok, or the
// failure of the call that stopped it (then `survey` holds what was seen before).
RemoteResult survey_remote(RedisRemote& store, std::size_t max_calls, RemoteSurvey* survey);

}  // namespace jitcache

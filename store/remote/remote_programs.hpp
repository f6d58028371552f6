// Recorded inputs on the remote (docs/remote.md, "Recorded inputs and jitcache warm"), so that a
// machine with an empty store can rebuild what the others built, for its own drivers:
//
//   <ns>:inputs:<digest hex>   an input record (hashing/recorded_inputs.hpp), framed as a "JCI1"
//                              blob (store/remote/remote_framing.hpp) under its own XXH3-128: one per
//                              distinct program, shared by every entry built from it
//   <ns>:program:<key hex>     a "JCP1" blob: the summary of one entry (which record, which device,
//                              which app, when, its key components' digests), what `jitcache warm`
//                              lists (SCAN MATCH <ns>:program:*) without fetching any binary
//
// <ns> is the entries' namespace (signed and unsigned apart). Every value is read as hostile:
// HMAC first when a key is set, checksum, sizes, cap, the id inside must be the name's, an input
// record's bytes must hash to its name and decode, a summary must have every field well-formed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/remote/redis_remote.hpp"
#include "store/remote_api/program_summary.hpp"

namespace jitcache {

// What framing adds to a blob's payload: magic, flags, id, size; checksum; tag.
inline constexpr std::uint64_t kBlobOverhead = 4 + 4 + 16 + 8 + 16 + 32;

std::string inputs_name(const RedisRemote& store, const Digest128& digest);
std::string program_name(const RedisRemote& store, const Digest128& key);

// Sends the input record named `digest` unless the server holds a value of exactly its framed
// length under that name already (a STRLEN, which also keeps it fresh in the server's LRU).
// ok with *sent saying which; skipped (nothing sent) for a record over the cap; or the failure.
RemoteResult publish_inputs(RedisRemote& store, const Digest128& digest, std::string_view record, bool* sent);

RemoteResult publish_program(RedisRemote& store, const Digest128& key, const nlohmann::json& summary);

// The framed values, for any remote (the Redis calls above, store/remote/http_remote.hpp).
std::string encode_inputs_blob(const Digest128& digest, std::string_view record, std::string_view hmac_key);
// publish_inputs over a file-like remote (HTTP, S3): sent with `put` unless `head` finds a value of
// exactly its framed length there; ok with *sent saying which, skipped over the cap, or the failure.
RemoteResult publish_inputs_unless_there(const Digest128& digest, std::string_view record, std::string_view hmac_key,
                                         const std::function<RemoteResult(std::uint64_t* size)>& head,
                                         const std::function<RemoteResult(const std::string& value)>& put, bool* sent);
// skipped (nothing framed) for a summary over its cap.
RemoteResult encode_program_blob(const Digest128& key, const nlohmann::json& summary, std::string_view hmac_key,
                                 std::string* value);

// How far a Redis listing walks for `jitcache warm` (SCAN calls of about 1000 names each).
inline constexpr std::size_t kMaxProgramListingCalls = 10000;

// SCAN over <ns>:program:* (at most `max_calls` steps), then one GET per summary, each verified.
// ok (what was seen is in `listing`), or the failure that stopped the walk.
RemoteResult list_programs(RedisRemote& store, std::size_t max_calls, RemoteListing* listing);

// Checks one summary read from `name` (of `key`): into listing->programs, or listing->refused.
void add_program_summary(const std::string& name, const Digest128& key, std::string_view value,
                         std::string_view hmac_key, RemoteListing* listing);

// Every check of an input record read under `digest` (at most the cap + framing long): ok with the
// record in `binary`, or corrupt / bad_hmac with the reason.
RemoteResult check_inputs_blob(const Digest128& digest, std::string_view value, std::string_view hmac_key);

// The input record named `digest`, every check passed: ok with the record in `binary`; miss;
// corrupt or bad_hmac with the reason; or the failure. At most the cap plus framing is read.
RemoteResult fetch_inputs(RedisRemote& store, const Digest128& digest);

}  // namespace jitcache

// What a remote publishes of each program for `jitcache warm` (docs/remote.md, "Recorded inputs
// and jitcache warm"): the summary of a stored entry and the listing warm reads back. The framing
// and the Redis calls are store/remote/remote_programs.hpp; this part needs no connection, so the
// engine builds summaries without linking any client.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hashing/digest.hpp"

namespace jitcache {

// An input record larger than this is neither sent nor accepted. Real programs' records are KiBs
// (hashcat's, with 2.5 MB of headers, is the largest known).
inline constexpr std::uint64_t kMaxRemoteInputsBytes = 16ull << 20;
inline constexpr std::uint64_t kMaxProgramSummaryBytes = 64ull << 10;
inline constexpr int kProgramSummarySchema = 1;

// The summary of a stored entry, from its sidecar; nullopt when the sidecar names no input record.
std::optional<nlohmann::json> program_summary(const nlohmann::json& sidecar, std::int64_t published_s);

struct RemoteProgram {
  Digest128 key;
  nlohmann::json summary;  // checked: every field program_summary() writes, well-formed
};

struct RemoteRefusal {
  std::string name;
  std::string reason;
};

struct RemoteListing {
  std::vector<RemoteProgram> programs;
  std::vector<RemoteRefusal> refused;  // summaries that failed a check
  bool complete = false;               // the whole keyspace was walked within max_calls
};

}  // namespace jitcache

// The binaries the concurrency tests store: self-describing, so that a reader can tell a complete,
// correctly keyed binary from anything else without trusting the store's own checksum.
//   "jitcache-stress key=<n> version=<v> size=<s>\n" followed by bytes generated from (n, v).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace jitcache::stress {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A size between 1 KiB and `max_bytes`, fixed per key and version.
inline std::size_t payload_size(std::uint64_t key, std::uint64_t version, std::size_t max_bytes) {
  return 1024 + static_cast<std::size_t>(mix(key * 1000003 + version) % (max_bytes - 1024));
}

inline std::string payload(std::uint64_t key, std::uint64_t version, std::size_t size) {
  char header[96];
  int length = std::snprintf(header, sizeof header, "jitcache-stress key=%llu version=%llu size=%zu\n",
                             static_cast<unsigned long long>(key), static_cast<unsigned long long>(version), size);
  std::string bytes(header, static_cast<std::size_t>(length));
  std::uint64_t state = mix(key ^ (version << 32));
  while (bytes.size() < size) {
    state = mix(state);
    bytes.push_back(static_cast<char>(state & 0xff));
  }
  return bytes;
}

struct PayloadId {
  std::uint64_t key = 0;
  std::uint64_t version = 0;
};

// The (key, version) a binary describes, when it is exactly what payload() makes for them.
inline std::optional<PayloadId> check_payload(const std::string& bytes) {
  unsigned long long key = 0, version = 0;
  std::size_t size = 0;
  if (std::sscanf(bytes.c_str(), "jitcache-stress key=%llu version=%llu size=%zu\n", &key, &version, &size) != 3) {
    return std::nullopt;
  }
  if (payload(key, version, size) != bytes) return std::nullopt;
  return PayloadId{key, version};
}

}  // namespace jitcache::stress

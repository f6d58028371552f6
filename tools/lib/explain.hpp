// The heart of `jitcache explain`: compares the key components of one lookup (from a trace) with
// those of cached entries (from sidecars), finds the closest entries and says, component by
// component and in words, what differs. Pure functions over JSON: unit-tested without a store.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace jitcache::tool {

// One thing that differs between a lookup and a cached entry. `now` is the lookup's side.
struct Difference {
  std::string component;    // key component: "options", "headers", "environment", "compiler", ...
  std::string subject;      // what inside it: "common.h", "POCL_WORK_GROUP_METHOD", "driver_version"
  std::string change;       // "changed", "added" (only in the lookup), "removed" (only in the entry)
  std::string now;          // readable value in the lookup ("" when absent)
  std::string cached;       // readable value in the cached entry ("" when absent)
  std::string description;  // one line, e.g. "env POCL_WORK_GROUP_METHOD=cbs vs unset"
};

// Compares two "components" objects (as in traces and sidecars: {name: {digest, value}}).
// Components with equal digests are equal; for the others the values say what changed.
std::vector<Difference> compare_components(const nlohmann::json& now, const nlohmann::json& cached);

// A cached entry as the store lists it.
struct CachedEntry {
  std::string key;
  nlohmann::json sidecar;
  std::int64_t last_access_ns = 0;
};

struct EntryMatch {
  const CachedEntry* entry = nullptr;
  std::vector<Difference> differences;
  bool same_input = false;       // identical program source / IL
  double source_similarity = 0;  // 0..1 share of equal source lines, when both texts are known
  bool shares_kernels = false;   // a kernel name in common
  std::size_t total_components = 0;
};

// The entries that look like earlier builds of the lookup's program (same input, similar source,
// or a kernel name in common), closest first: fewest differing components, then same input,
// then most similar source, then most recently used. `exclude_key` is the lookup's own key (a
// miss stores an entry under it). `kernels` are the lookup's kernel names when known.
std::vector<EntryMatch> closest_entries(const nlohmann::json& components, const std::vector<std::string>& kernels,
                                        const std::vector<CachedEntry>& entries, const std::string& exclude_key,
                                        std::size_t limit);

// Kernel names declared in OpenCL C text ("__kernel void name(" / "kernel void name(").
std::vector<std::string> kernel_names_in(const std::string& source);

// Share of lines of `a` that also appear in `b` (multiset), in [0, 1].
double line_similarity(const std::string& a, const std::string& b);

// "header common.h changed" / "2 things changed: build options, env POCL_WORK_GROUP_METHOD".
std::string summarize(const std::vector<Difference>& differences);

// What to do about a miss against `match`: when only the compiler identity differs (a driver
// upgrade) and the entry recorded its inputs, `jitcache warm` rebuilds them for the new compiler.
// Empty when there is nothing to suggest.
std::string suggestion(const EntryMatch& match);

}  // namespace jitcache::tool

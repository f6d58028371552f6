// After a real build: did any header the key was derived from change while the build ran?
// Like ccache's "include file too new": a header modified (mtime or ctime) after the inputs were
// read, or whose contents no longer hash to what the key holds, means the binary may come from
// another version than the key names, so it must not be stored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hashing/build_inputs.hpp"

namespace jitcache {

// File times are stamped from a coarse clock that lags the wall clock by up to a scheduler tick;
// a header written just after the inputs were read may carry a time this much earlier.
inline constexpr std::int64_t kFileClockSlackNs = 20'000'000;

// Empty when every found header is unchanged since `inputs_read_at_ns` (wall clock, ns); else which
// header changed and how. Reads each header again: called once per real build, off the hit path.
std::string changed_input(const std::vector<HeaderDependency>& headers, std::int64_t inputs_read_at_ns);

}  // namespace jitcache

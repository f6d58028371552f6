// Every tar member of a pack, walked from the first block, for `jitcache pack verify`:
// the reader reaches members only through the index, so a member the index never names (a `../`
// path, an absolute one, a symlink) would pass unseen, yet `tar xf` of the pack would write it.
#pragma once

#include <string>
#include <vector>

#include "store/pack/pack_reader.hpp"

namespace jitcache::pack {

// What is wrong with the pack's members, one line each (empty: every member is a regular file
// with a name of the layout, docs/pack-format.md). At most `limit` lines.
std::vector<std::string> member_problems(const PackReader& pack, std::size_t limit = 20);

}  // namespace jitcache::pack

// A byte count as people read it: "812 B", "48.2 KiB", "1.0 GiB" (the tool's listings, doctor's
// findings about a store or a shared directory).
#pragma once

#include <cstdint>
#include <string>

namespace jitcache {

std::string size_text(std::uint64_t bytes);

}  // namespace jitcache

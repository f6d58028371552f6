// Captures still in flight (DiskStore::captures_in_flight, docs/concurrency.md): capture helpers
// still building entries that an app handed over. Tools that show or copy the cache say so, and
// those that need the cache complete wait for them.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "store/local/disk_store.hpp"

namespace jitcache::tool {

// "N captures in flight ..." for a tool's output; empty for none.
std::string in_flight_note(std::size_t in_flight);

// Prints the note on stderr when some are in flight (so that piped stdout stays the same).
void note_captures_in_flight(const DiskStore& store);

// Waits at most `bound` for the captures in flight, with a progress line on a terminal (stderr);
// nothing extra when stderr is not one. Returns how many are still in flight.
std::size_t wait_for_captures(const DiskStore& store, std::chrono::milliseconds bound);

}  // namespace jitcache::tool

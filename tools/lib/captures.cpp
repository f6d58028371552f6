#include "tools/lib/captures.hpp"

#include <cstdio>

#include "tools/lib/format.hpp"

#if defined(_WIN32)
#include <io.h>
#define isatty _isatty
#define fileno _fileno
#else
#include <unistd.h>
#endif

namespace jitcache::tool {

std::string in_flight_note(std::size_t in_flight) {
  if (in_flight == 0) return {};
  return std::to_string(in_flight) + (in_flight == 1 ? " capture" : " captures") +
         " still in flight: capture helpers are storing entries an app built (`jitcache wait` waits for them)";
}

void note_captures_in_flight(const DiskStore& store) {
  if (std::string note = in_flight_note(store.captures_in_flight()); !note.empty()) {
    std::fprintf(stderr, "%s\n", note.c_str());
  }
}

std::size_t wait_for_captures(const DiskStore& store, std::chrono::milliseconds bound) {
  const bool terminal = isatty(fileno(stderr));
  bool shown = false;
  const std::size_t left = store.wait_for_captures(bound, [&](std::size_t in_flight) {
    if (!terminal) return;
    std::fprintf(stderr, "\rwaiting for %zu capture%s in flight (at most %s) ", in_flight, in_flight == 1 ? "" : "s",
                 format_duration_us(static_cast<std::uint64_t>(bound.count()) * 1000).c_str());
    std::fflush(stderr);
    shown = true;
  });
  if (shown) std::fprintf(stderr, "\r\033[K");
  return left;
}

}  // namespace jitcache::tool

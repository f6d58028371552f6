#include "core/clock.hpp"

#include <cstdio>

namespace jitcache {

// UTC from the C++20 calendar types: no gmtime_r (POSIX) / gmtime_s (Windows) split.
std::string iso8601_now() {
  using namespace std::chrono;
  const auto now = floor<microseconds>(system_clock::now());
  const auto day = floor<days>(now);
  const year_month_day date{day};
  const hh_mm_ss time{now - day};
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()), static_cast<long long>(time.subseconds().count()));
  return text;
}

}  // namespace jitcache

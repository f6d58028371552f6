// The Level Zero two-call pattern for strings: a null buffer asks for the size (NUL included);
// otherwise up to *size bytes are written, always NUL-terminated.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace jitcache::test_ze {

inline void copy_string_out(std::string_view text, std::size_t* size, char* buffer) {
  if (buffer == nullptr || *size == 0) {
    *size = text.size() + 1;
    return;
  }
  const std::size_t copied = std::min(text.size(), *size - 1);
  std::memcpy(buffer, text.data(), copied);
  buffer[copied] = '\0';
  *size = copied + 1;
}

}  // namespace jitcache::test_ze

// The fixed-length text records of the store (the size record, the shard records, the index
// header): numbers written as 20 zero-padded digits (the largest uint64 has 20), read back strictly.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "store/local/store_types.hpp"

namespace jitcache::store_detail {

inline constexpr std::size_t kNumberWidth = 20;

inline std::string padded(std::uint64_t value) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(value));
  return digits;
}

// Consumes `expected` from the front of `text`; false (text unchanged) when it is not there.
inline bool take(std::string_view* text, std::string_view expected) {
  if (text->substr(0, expected.size()) != expected) return false;
  text->remove_prefix(expected.size());
  return true;
}

// Consumes exactly kNumberWidth digits.
inline bool take_number(std::string_view* text, std::uint64_t* value) {
  if (text->size() < kNumberWidth) return false;
  const std::string_view digits = text->substr(0, kNumberWidth);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  if (error != std::errc() || end != digits.data() + digits.size()) return false;
  text->remove_prefix(kNumberWidth);
  return true;
}

// "clean|dirty bytes=<20 digits> entries=<20 digits>": what the size record and every shard
// record begin with after their own name.
inline std::string format_state_totals(bool dirty, const SizeInfo& totals) {
  return std::string(dirty ? "dirty" : "clean") + " bytes=" + padded(totals.bytes) + " entries=" + padded(totals.entries);
}

inline bool take_state_totals(std::string_view* text, bool* dirty, SizeInfo* totals) {
  if (take(text, "dirty")) {
    *dirty = true;
  } else if (take(text, "clean")) {
    *dirty = false;
  } else {
    return false;
  }
  return take(text, " bytes=") && take_number(text, &totals->bytes) && take(text, " entries=") &&
         take_number(text, &totals->entries);
}

}  // namespace jitcache::store_detail

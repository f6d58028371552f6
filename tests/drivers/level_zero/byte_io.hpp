// Little-endian field writer and bounds-checked reader for the driver's native binary format.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::test_ze {

static_assert(std::endian::native == std::endian::little,
              "the native binary format stores host integers as little-endian");

class ByteWriter {
 public:
  void u32(std::uint32_t value) { raw(&value, sizeof value); }
  void u64(std::uint64_t value) { raw(&value, sizeof value); }
  void bytes(std::span<const std::uint8_t> data) { raw(data.data(), data.size()); }
  void text(std::string_view data) { raw(data.data(), data.size()); }
  std::vector<std::uint8_t>& buffer() { return buffer_; }

 private:
  void raw(const void* data, std::size_t size) {
    const auto* first = static_cast<const std::uint8_t*>(data);
    buffer_.insert(buffer_.end(), first, first + size);
  }
  std::vector<std::uint8_t> buffer_;
};

// Every read fails (returns nullopt) instead of running past the end of the input.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> data) : data_(data) {}

  std::optional<std::uint32_t> u32() { return scalar<std::uint32_t>(); }
  std::optional<std::uint64_t> u64() { return scalar<std::uint64_t>(); }

  std::optional<std::span<const std::uint8_t>> bytes(std::uint64_t size) {
    if (size > remaining()) return std::nullopt;
    auto slice = data_.subspan(offset_, static_cast<std::size_t>(size));
    offset_ += static_cast<std::size_t>(size);
    return slice;
  }

  std::optional<std::string> text(std::uint64_t size) {
    auto slice = bytes(size);
    if (!slice) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(slice->data()), slice->size());
  }

  std::size_t remaining() const { return data_.size() - offset_; }

 private:
  template <typename T>
  std::optional<T> scalar() {
    if (sizeof(T) > remaining()) return std::nullopt;
    T value;
    std::memcpy(&value, data_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  std::span<const std::uint8_t> data_;
  std::size_t offset_ = 0;
};

}  // namespace jitcache::test_ze

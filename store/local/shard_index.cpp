#include "store/local/shard_index.hpp"

#include <charconv>

#include "hashing/bounded_json.hpp"
#include "store/local/record_text.hpp"
#include "store/local/shard_records.hpp"

namespace jitcache::store_detail {
namespace {

// "jitcache-index 1 shard=ab gen=<20> entries=<20> xxh3=<16>\n", then one line per entry:
// "<32 hex key> <bytes> <summary JSON>\n".
constexpr std::string_view kIndexMagic = "jitcache-index 1 shard=";
constexpr std::size_t kHeaderLength = kIndexMagic.size() + 2 + 5 + kNumberWidth + 9 + kNumberWidth + 6 + 16 + 1;

bool number(std::string_view text, std::uint64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

std::string header(int slot, std::uint64_t generation, std::size_t entries, std::string_view body) {
  return std::string(kIndexMagic) + shard_name(slot) + " gen=" + padded(generation) + " entries=" + padded(entries) +
         " xxh3=" + hex64(xxh3_64(body)) + "\n";
}

}  // namespace

const std::vector<std::string> kSummaryFields = {"key",    "api",   "kind",         "device",          "label",
                                                 "created", "created_by", "kernel_names", "compile_time_us",
                                                 "binary_size", "inputs", "schema"};

nlohmann::json sidecar_summary(const nlohmann::json& sidecar) {
  if (!sidecar.is_object()) return nullptr;
  nlohmann::json summary = nlohmann::json::object();
  for (const std::string& field : kSummaryFields) {
    const auto it = sidecar.find(field);
    if (it != sidecar.end()) summary[field] = *it;
  }
  return summary;
}

std::string format_shard_index(int slot, std::uint64_t generation, const std::vector<IndexedEntry>& entries) {
  std::string body;
  for (const IndexedEntry& entry : entries) {
    body += entry.key.hex() + " " + std::to_string(entry.bytes) + " " +
            entry.summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return header(slot, generation, entries.size(), body) + body;
}

std::optional<std::vector<IndexedEntry>> parse_shard_index(int slot, std::uint64_t generation, std::string_view text) {
  if (text.size() < kHeaderLength || text.size() > kMaxIndexBytes) return std::nullopt;
  const std::string_view body = text.substr(kHeaderLength);
  std::uint64_t count = 0;
  const std::string_view head = text.substr(0, kHeaderLength);
  const std::string_view count_text = head.substr(kIndexMagic.size() + 2 + 5 + kNumberWidth + 9, kNumberWidth);
  if (!number(count_text, &count) || count > body.size() / 34) return std::nullopt;
  if (head != header(slot, generation, static_cast<std::size_t>(count), body)) return std::nullopt;

  const std::string prefix = shard_name(slot);
  std::vector<IndexedEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  std::string_view rest = body;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    const std::size_t space = line.find(' ', 33);
    if (line.size() < 36 || line[32] != ' ' || space == std::string_view::npos) return std::nullopt;
    IndexedEntry entry;
    const std::optional<Digest128> key = Digest128::from_hex(line.substr(0, 32));
    if (!key || key->hex() != line.substr(0, 32) || line.substr(0, 2) != prefix) return std::nullopt;
    entry.key = *key;
    if (!number(line.substr(33, space - 33), &entry.bytes)) return std::nullopt;
    entry.summary = parse_untrusted_json(line.substr(space + 1));
    if (entry.summary.is_discarded() || !(entry.summary.is_object() || entry.summary.is_null())) return std::nullopt;
    entries.push_back(std::move(entry));
  }
  if (entries.size() != count) return std::nullopt;
  return entries;
}

}  // namespace jitcache::store_detail

// Human output of the tool: sizes in KiB/MiB/GiB, durations in ms/s, ages, and aligned columns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache::tool {

std::string format_size(std::uint64_t bytes);        // "812 B", "48.2 KiB", "1.0 GiB"
std::string format_duration_us(std::uint64_t us);    // "0.4 ms", "812 ms", "12.3 s", "5.2 min", "3.1 h"
std::string format_age_ns(std::int64_t ns);          // "12 s", "3 min", "5 h", "2 d" (negative: "0 s")
std::string format_time_ns(std::int64_t epoch_ns);   // local "2026-11-23 08:12:01"
std::string short_hex(const std::string& hex, std::size_t digits = 12);  // "3f2a9c1d4e5f.."

// Columns separated by two spaces, each as wide as its widest cell. Columns named in
// `right_aligned` (by index) are padded on the left, for numbers.
class Table {
 public:
  explicit Table(std::vector<std::string> header = {}, std::vector<std::size_t> right_aligned = {});
  void add(std::vector<std::string> row);
  std::string render(const std::string& indent = "") const;
  bool empty() const { return rows_.empty(); }

  // For a table printed in chunks as its rows come (a streamed listing): columns are at least
  // `widths` wide, so that chunks line up as long as no cell is wider; take_rendered() renders the
  // rows added since its last call (the header with the first) and forgets them.
  void set_min_widths(std::vector<std::size_t> widths) { min_widths_ = std::move(widths); }
  std::string take_rendered();

 private:
  std::string render_rows(bool with_header, const std::string& indent) const;

  std::vector<std::string> header_;
  std::vector<std::size_t> right_aligned_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> min_widths_;
  bool header_taken_ = false;
};

// Display width of UTF-8 text (code points; good enough for paths and names).
std::size_t display_width(const std::string& text);

// One line of Markdown as plain text: `code` loses its backticks, [text](link) keeps its text
// (a setting's doc in man pages and `jitcache config --json`).
std::string plain_text(std::string_view markdown);

}  // namespace jitcache::tool

#include "tools/lib/format.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/platform.hpp"
#include "store/files/size_text.hpp"

namespace jitcache::tool {
namespace {

std::string one_decimal(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, value < 10 ? "%.1f %s" : "%.0f %s", value, unit);
  return text;
}

}  // namespace

std::string format_size(std::uint64_t bytes) { return size_text(bytes); }

std::string format_duration_us(std::uint64_t us) {
  const double ms = static_cast<double>(us) / 1000;
  if (ms < 1000) return one_decimal(ms, "ms");
  const double s = ms / 1000;
  if (s < 120) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f s", s);
    return text;
  }
  if (s < 7200) return one_decimal(s / 60, "min");
  return one_decimal(s / 3600, "h");
}

std::string format_age_ns(std::int64_t ns) {
  const std::int64_t s = std::max<std::int64_t>(0, ns / 1000000000);
  if (s < 120) return std::to_string(s) + " s";
  if (s < 7200) return std::to_string(s / 60) + " min";
  if (s < 2 * 86400) return std::to_string(s / 3600) + " h";
  return std::to_string(s / 86400) + " d";
}

std::string format_time_ns(std::int64_t epoch_ns) {
  std::time_t seconds = static_cast<std::time_t>(epoch_ns / 1000000000);
  const std::tm local = platform::local_time(seconds);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

std::string short_hex(const std::string& hex, std::size_t digits) {
  return hex.size() <= digits ? hex : hex.substr(0, digits) + "..";
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xc0) != 0x80) ++width;  // count lead bytes only
  }
  return width;
}

Table::Table(std::vector<std::string> header, std::vector<std::size_t> right_aligned)
    : header_(std::move(header)), right_aligned_(std::move(right_aligned)) {}

void Table::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::string Table::render(const std::string& indent) const { return render_rows(true, indent); }

std::string Table::take_rendered() {
  std::string out = render_rows(!header_taken_, "");
  header_taken_ = true;
  rows_.clear();
  return out;
}

std::string Table::render_rows(bool with_header, const std::string& indent) const {
  std::vector<const std::vector<std::string>*> all;
  for (const auto& row : rows_) all.push_back(&row);
  std::vector<std::size_t> widths = min_widths_;
  if (widths.size() < header_.size()) widths.resize(header_.size(), 0);
  for (std::size_t i = 0; i < header_.size(); ++i) widths[i] = std::max(widths[i], display_width(header_[i]));
  for (const auto* row : all) {
    if (widths.size() < row->size()) widths.resize(row->size(), 0);
    for (std::size_t i = 0; i < row->size(); ++i) widths[i] = std::max(widths[i], display_width((*row)[i]));
  }
  if (with_header && !header_.empty()) all.insert(all.begin(), &header_);
  std::string out;
  for (const auto* row : all) {
    std::string line = indent;
    for (std::size_t i = 0; i < row->size(); ++i) {
      const std::string& cell = (*row)[i];
      const std::size_t pad = widths[i] - display_width(cell);
      const bool right = std::find(right_aligned_.begin(), right_aligned_.end(), i) != right_aligned_.end();
      if (i > 0) line += "  ";
      if (right) line += std::string(pad, ' ') + cell;
      else line += cell + (i + 1 < row->size() ? std::string(pad, ' ') : "");
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string plain_text(std::string_view markdown) {
  std::string out;
  for (std::size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] == '`') continue;
    if (markdown[i] == '[') {  // [text](target): the text, without brackets or target
      const std::size_t close = markdown.find_first_of("[]", i + 1);
      const std::size_t end = close != std::string_view::npos && markdown[close] == ']' &&
                                      markdown.substr(close + 1, 1) == "("
                                  ? markdown.find(')', close)
                                  : std::string_view::npos;
      if (end != std::string_view::npos) {
        out += plain_text(markdown.substr(i + 1, close - i - 1));
        i = end;
        continue;
      }
    }
    out += markdown[i];
  }
  return out;
}

}  // namespace jitcache::tool

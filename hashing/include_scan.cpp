#include "hashing/include_scan.hpp"

#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <system_error>

namespace jitcache {
namespace {

namespace fs = std::filesystem;

// Bounds against hostile or pathological sources; real programs stay far below them.
constexpr int kMaxIncludeDepth = 64;
constexpr std::size_t kMaxHeaders = 4096;
// Recorded (found = false) when a bound cuts the scan short, so such a key is at least distinct.
constexpr char kTruncatedMarker[] = "<include scan truncated>";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Splits options like a shell would for our purpose: whitespace separates words, and single or
// double quotes group (and are removed) anywhere in a word, so -I"a b" and "-Ia b" both work.
std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      else word.push_back(c);
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (is_space(c) || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// Removes backslash-newline splices, then comments (keeping newlines so lines stay lines).
// String and character literals are skipped so "a//b" is not mistaken for a comment.
std::string strip_comments(std::string_view source) {
  std::string spliced;
  spliced.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\\' && i + 1 < source.size() && source[i + 1] == '\n') { ++i; continue; }
    if (source[i] == '\\' && i + 2 < source.size() && source[i + 1] == '\r' && source[i + 2] == '\n') {
      i += 2;
      continue;
    }
    spliced.push_back(source[i]);
  }
  std::string out;
  out.reserve(spliced.size());
  enum class State { code, line_comment, block_comment, literal } state = State::code;
  char literal_quote = 0;
  for (std::size_t i = 0; i < spliced.size(); ++i) {
    const char c = spliced[i];
    const char next = i + 1 < spliced.size() ? spliced[i + 1] : '\0';
    switch (state) {
      case State::code:
        if (c == '/' && next == '/') { state = State::line_comment; ++i; }
        else if (c == '/' && next == '*') { state = State::block_comment; out.push_back(' '); ++i; }
        else {
          if (c == '"' || c == '\'') { state = State::literal; literal_quote = c; }
          out.push_back(c);
        }
        break;
      case State::line_comment:
        if (c == '\n') { state = State::code; out.push_back(c); }
        break;
      case State::block_comment:
        if (c == '*' && next == '/') { state = State::code; ++i; }
        else if (c == '\n') out.push_back(c);
        break;
      case State::literal:
        out.push_back(c);
        if (c == '\\' && next != '\0') { out.push_back(next); ++i; }
        else if (c == literal_quote || c == '\n') state = State::code;
        break;
    }
  }
  return out;
}

struct IncludeDirective {
  std::string name;
  bool quoted = false;
};

std::size_t skip_spaces(std::string_view line, std::size_t position) {
  while (position < line.size() && is_space(line[position])) ++position;
  return position;
}

// `# include "x"` or `#include <x>`; macro includes (#include NAME) cannot be resolved here.
std::optional<IncludeDirective> parse_include_line(std::string_view line) {
  std::size_t position = skip_spaces(line, 0);
  if (position >= line.size() || line[position] != '#') return std::nullopt;
  position = skip_spaces(line, position + 1);
  constexpr std::string_view kInclude = "include";
  if (line.substr(position, kInclude.size()) != kInclude) return std::nullopt;
  position = skip_spaces(line, position + kInclude.size());
  if (position >= line.size()) return std::nullopt;
  const char open = line[position];
  const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
  if (close == '\0') return std::nullopt;
  const std::size_t end = line.find(close, position + 1);
  if (end == std::string_view::npos || end == position + 1) return std::nullopt;
  return IncludeDirective{std::string(line.substr(position + 1, end - position - 1)), open == '"'};
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<IncludeDirective> find_includes(std::string_view source) {
  if (!may_include(source)) return {};
  const std::string code = strip_comments(source);
  const std::string_view text(code);
  std::vector<IncludeDirective> includes;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (auto directive = parse_include_line(text.substr(start, end - start))) {
      includes.push_back(std::move(*directive));
    }
    start = end + 1;
  }
  return includes;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return std::nullopt;
  return contents;
}

class IncludeScanner {
 public:
  IncludeScanner(const std::vector<fs::path>& include_dirs, const fs::path& working_dir)
      : working_dir_(working_dir) {
    // Relative -I dirs are relative to where the compiler runs: the working directory.
    for (const fs::path& dir : include_dirs) include_dirs_.push_back(working_dir / dir);
  }

  void scan(std::string_view source, const fs::path& including_dir, int depth) {
    for (const IncludeDirective& include : find_includes(source)) {
      if (truncated_) return;
      if (headers_.size() >= kMaxHeaders || depth >= kMaxIncludeDepth) return mark_truncated();
      visit(include, including_dir, depth);
    }
  }

  std::vector<HeaderDependency> take() { return std::move(headers_); }

 private:
  void visit(const IncludeDirective& include, const fs::path& including_dir, int depth) {
    const std::optional<fs::path> path = resolve(include, including_dir);
    if (!path) return record_missing(include.name);
    if (!seen_paths_.insert(path->string()).second) return;  // dedup; also ends cycles
    const std::optional<std::string> contents = read_file(*path);
    if (!contents) return record_missing(include.name);
    headers_.push_back({include.name, path->string(), true, xxh3_128(*contents)});
    scan(*contents, path->parent_path(), depth + 1);
  }

  // First regular file along the search order, as a canonical path (symlinks resolved) so the
  // same header reached two ways is scanned once.
  std::optional<fs::path> resolve(const IncludeDirective& include, const fs::path& including_dir) const {
    std::vector<fs::path> dirs;
    if (include.quoted) dirs.push_back(including_dir);
    dirs.insert(dirs.end(), include_dirs_.begin(), include_dirs_.end());
    dirs.push_back(working_dir_);
    for (const fs::path& dir : dirs) {
      const fs::path candidate = dir / include.name;  // an absolute name replaces dir
      std::error_code error;
      if (!fs::is_regular_file(candidate, error)) continue;
      fs::path canonical = fs::canonical(candidate, error);
      return error ? candidate.lexically_normal() : canonical;
    }
    return std::nullopt;
  }

  void record_missing(const std::string& name) {
    if (!missing_names_.insert(name).second) return;
    headers_.push_back({name, "", false, Digest128{}});
  }

  void mark_truncated() {
    truncated_ = true;
    headers_.push_back({kTruncatedMarker, "", false, Digest128{}});
  }

  std::vector<fs::path> include_dirs_;
  fs::path working_dir_;
  std::vector<HeaderDependency> headers_;
  std::set<std::string> seen_paths_;
  std::set<std::string> missing_names_;
  bool truncated_ = false;
};

}  // namespace

// Every '#' followed (after blanks) by another word, with no comment or backslash-newline that
// could hide an include: the full scan, which copies the source and costs ~10 ns per byte (1 ms of
// a 100 KiB memory hit), is skipped. '#' is rare in kernels.
bool may_include(std::string_view source) {
  for (std::size_t hash = source.find('#'); hash != std::string_view::npos; hash = source.find('#', hash + 1)) {
    std::size_t word = hash + 1;
    while (word < source.size() && is_space(source[word])) ++word;
    std::size_t end = word;
    while (end < source.size() && is_word_char(source[end])) ++end;
    if (source.substr(word, end - word) == "include") return true;
    if (end < source.size() && (source[end] == '\\' || source[end] == '/')) return true;
  }
  return false;
}

std::vector<fs::path> include_dirs_from_options(std::string_view options) {
  std::vector<fs::path> dirs;
  const std::vector<std::string> words = split_words(options);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("-I", 0) != 0) continue;
    if (word.size() > 2) dirs.emplace_back(word.substr(2));
    else if (i + 1 < words.size()) dirs.emplace_back(words[++i]);
  }
  return dirs;
}

std::vector<HeaderDependency> scan_includes(std::string_view source,
                                            const std::vector<fs::path>& include_dirs,
                                            const fs::path& working_dir) {
  IncludeScanner scanner(include_dirs, working_dir);
  scanner.scan(source, working_dir, 0);
  return scanner.take();
}

}  // namespace jitcache

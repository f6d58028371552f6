#include "hashing/include_scan.hpp"

#include "hashing/include_macros.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
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
// String and character literals are skipped so "a//b" is not mistaken for a comment. Code is
// copied in runs between the characters that may start a comment or literal: hashcat's kernels
// bring megabytes of headers per build, and a copy by character was most of each lookup.
std::string strip_comments(std::string_view source) {
  std::string spliced;
  std::string_view text = source;
  if (source.find("\\\n") != std::string_view::npos || source.find("\\\r\n") != std::string_view::npos) {
    spliced.reserve(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\\' && i + 1 < source.size() && source[i + 1] == '\n') { ++i; continue; }
      if (source[i] == '\\' && i + 2 < source.size() && source[i + 1] == '\r' && source[i + 2] == '\n') {
        i += 2;
        continue;
      }
      spliced.push_back(source[i]);
    }
    text = spliced;
  }
  std::string out;
  out.reserve(text.size());
  const std::size_t size = text.size();
  for (std::size_t i = 0; i < size;) {
    std::size_t special = i;
    while (special < size && text[special] != '/' && text[special] != '"' && text[special] != '\'') ++special;
    out.append(text.data() + i, special - i);
    if (special == size) break;
    const char c = text[special];
    const char next = special + 1 < size ? text[special + 1] : '\0';
    if (c == '/' && next == '/') {  // to the end of the line; the newline stays
      i = text.find('\n', special + 2);
      if (i == std::string_view::npos) break;
    } else if (c == '/' && next == '*') {  // one blank, and the newlines inside
      const std::size_t end = std::min(text.find("*/", special + 2), size);
      out.push_back(' ');
      out.append(static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(special) + 2,
                                                     text.begin() + static_cast<std::ptrdiff_t>(end), '\n')),
                 '\n');
      i = end == size ? size : end + 2;
    } else if (c == '/') {
      out.push_back(c);
      i = special + 1;
    } else {  // a literal, to its closing quote or the end of the line
      std::size_t end = special + 1;
      while (end < size) {
        const char d = text[end];
        if (d == '\\' && end + 1 < size) {
          end += 2;
          continue;
        }
        ++end;
        if (d == c || d == '\n') break;
      }
      out.append(text.data() + special, end - special);
      i = end;
    }
  }
  return out;
}

struct IncludeDirective {
  std::string name;
  bool quoted = false;
  // Non-empty: the directive names a header the scan cannot resolve exactly (#include_next,
  // #embed, __has_include(NAME)); `name` is then empty and this says what was seen.
  std::string unresolved;
  bool probe_only = false;  // __has_include: the header's presence matters, it is not read
  // `#include NAME`: the operand, for include_macros to expand, and the directive as written.
  std::string computed;
  std::string written;
};

// A line of a file that matters to the scan, in file order.
struct Directive {
  enum class Kind { include, define, undef } kind = Kind::include;
  IncludeDirective include;  // Kind::include
  std::string text;          // define, undef: what follows the directive word
  std::size_t line = 0;
  bool conditional = false;  // inside #if / #ifdef / #ifndef
};

std::size_t skip_spaces(std::string_view line, std::size_t position) {
  while (position < line.size() && is_space(line[position])) ++position;
  return position;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The directive introducer: '#', or its digraph "%:" and trigraph "??=" spellings, which the
// compiler's preprocessor reads the same way.
std::size_t directive_start(std::string_view line) {
  const std::size_t position = skip_spaces(line, 0);
  if (line.substr(position, 1) == "#") return position + 1;
  if (line.substr(position, 2) == "%:") return position + 2;
  if (line.substr(position, 3) == "?\?=") return position + 3;
  return std::string_view::npos;
}

// `"name"` or `<name>` at `position`; nullopt when the operand is anything else (a macro).
std::optional<IncludeDirective> header_operand(std::string_view text, std::size_t position) {
  if (position >= text.size()) return std::nullopt;
  const char open = text[position];
  const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
  if (close == '\0') return std::nullopt;
  const std::size_t end = text.find(close, position + 1);
  if (end == std::string_view::npos || end == position + 1) return std::nullopt;
  return IncludeDirective{std::string(text.substr(position + 1, end - position - 1)), open == '"', {}, false, {}, {}};
}

std::string excerpt(std::string_view text) {
  std::string out(text.substr(0, 80));
  while (!out.empty() && is_space(out.back())) out.pop_back();
  return out;
}

// The directive word of a line and the position after it; empty when the line is no directive.
std::string_view directive_word(std::string_view line, std::size_t* after) {
  std::size_t position = directive_start(line);
  if (position == std::string_view::npos) return {};
  position = skip_spaces(line, position);
  std::size_t end = position;
  while (end < line.size() && is_word_char(line[end])) ++end;
  *after = end;
  return line.substr(position, end - position);
}

// `# include "x"`, `%:include <x>`, `#import "x"`; `#include NAME` comes back computed (its
// operand), `#include_next` and `#embed` unresolved.
std::optional<IncludeDirective> parse_include(std::string_view line, std::string_view word, std::size_t end) {
  const std::string written = excerpt(line.substr(skip_spaces(line, 0)));
  if (word == "include_next" || word == "embed") {
    return IncludeDirective{{}, false, "#" + std::string(word) + " (" + written + ")", false, {}, {}};
  }
  if (word != "include" && word != "import") return std::nullopt;
  const std::size_t position = skip_spaces(line, end);
  if (auto operand = header_operand(line, position)) return operand;
  return IncludeDirective{{}, false, {}, false, std::string(line.substr(position)), written};
}
// Every __has_include("x") / __has_include(<x>) in `text`; a macro operand or
// __has_include_next comes back unresolved.
void find_has_includes(std::string_view text, std::vector<IncludeDirective>* found) {
  constexpr std::string_view kProbe = "__has_include";
  for (std::size_t at = text.find(kProbe); at != std::string_view::npos; at = text.find(kProbe, at + 1)) {
    std::size_t position = at + kProbe.size();
    if (text.substr(position, 5) == "_next") {
      found->push_back({{}, false, "__has_include_next", true, {}, {}});
      continue;
    }
    if (position < text.size() && is_word_char(text[position])) continue;  // another identifier
    position = skip_spaces(text, position);
    if (text.substr(position, 1) != "(") {
      found->push_back({{}, false, "__has_include without a literal operand", true, {}, {}});
      continue;
    }
    std::optional<IncludeDirective> operand = header_operand(text, skip_spaces(text, position + 1));
    if (!operand) {
      const std::string seen = excerpt(text.substr(position + 1, 40));
      found->push_back({{}, false, "__has_include(" + seen + ") with a macro operand", true, {}, {}});
      continue;
    }
    operand->probe_only = true;
    found->push_back(std::move(*operand));
  }
}

// The includes, #defines and #undefs of `source` in order, then its __has_include probes. A file
// without includes is read too: its #defines and #undefs matter to computed includes after it.
std::vector<Directive> find_directives(std::string_view source) {
  if (source.find('#') == std::string_view::npos && source.find("%:") == std::string_view::npos &&
      source.find("?\?=") == std::string_view::npos) {
    return {};
  }
  const std::string code = strip_comments(source);
  const std::string_view text(code);
  std::vector<Directive> directives;
  int nesting = 0;  // #if depth: a #define inside one may or may not happen
  std::size_t line = 0;
  for (std::size_t start = 0; start <= text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view current = text.substr(start, end - start);
    start = end + 1;
    std::size_t after = 0;
    const std::string_view word = directive_word(current, &after);
    if (word.empty()) continue;
    if (word == "if" || word == "ifdef" || word == "ifndef") {
      ++nesting;
    } else if (word == "endif") {
      nesting = std::max(0, nesting - 1);
    } else if (word == "define" || word == "undef") {
      directives.push_back({word == "define" ? Directive::Kind::define : Directive::Kind::undef, {},
                            std::string(current.substr(after)), line, nesting > 0});
    } else if (auto include = parse_include(current, word, after)) {
      directives.push_back({Directive::Kind::include, std::move(*include), {}, line, nesting > 0});
    }
  }
  std::vector<IncludeDirective> probes;
  find_has_includes(text, &probes);
  for (IncludeDirective& probe : probes) directives.push_back({Directive::Kind::include, std::move(probe), {}, line, false});
  return directives;
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::string contents;
  char buffer[1 << 16];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) contents.append(buffer, static_cast<std::size_t>(file.gcount()));
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

  // -D / -U of the build options and driver flags, for computed includes.
  void add_macro_options(const std::vector<std::string>& options) {
    for (const std::string& text : options) macros_.add_options(text);
  }

  void scan(std::string_view source, const fs::path& including_dir, int depth) {
    const std::size_t file = next_file_++;
    for (Directive& directive : find_directives(source)) {
      if (truncated_) return;
      if (directive.kind == Directive::Kind::define) {
        macros_.add_define(directive.text, file, directive.line, directive.conditional);
        continue;
      }
      if (directive.kind == Directive::Kind::undef) {
        macros_.add_undef(directive.text);
        continue;
      }
      IncludeDirective& include = directive.include;
      if (!include.written.empty()) {
        ComputedInclude expanded = macros_.expand(include.computed, file, directive.line);
        if (!expanded.unresolved.empty()) {
          if (unresolved_.empty()) unresolved_ = "computed #include (" + include.written + "): " + expanded.unresolved;
          continue;
        }
        include.name = std::move(expanded.name);
        include.quoted = true;
      }
      if (!include.unresolved.empty()) {
        if (unresolved_.empty()) unresolved_ = include.unresolved;
        continue;
      }
      if (headers_.size() >= kMaxHeaders) {
        return mark_truncated("more than " + std::to_string(kMaxHeaders) + " headers");
      }
      if (depth >= kMaxIncludeDepth) {
        return mark_truncated("includes nested deeper than " + std::to_string(kMaxIncludeDepth));
      }
      visit(include, including_dir, depth);
    }
  }

  // `-include FILE`: read as if `#include "FILE"` were the first line of the source.
  void scan_forced(const std::string& name) {
    if (truncated_) return;
    visit(IncludeDirective{name, true, {}, false, {}, {}}, working_dir_, 0);
  }

  IncludeScan take() {
    // A macro a computed include used may have been defined again or #undef'd further on.
    if (std::string changed = macros_.recheck(); !changed.empty() && unresolved_.empty()) {
      unresolved_ = "computed #include: " + changed;
    }
    return {std::move(headers_), std::move(unresolved_)};
  }

 private:
  void visit(const IncludeDirective& include, const fs::path& including_dir, int depth) {
    const std::optional<fs::path> path = resolve(include, including_dir);
    if (!path) return record_missing(include.name);
    if (!seen_paths_.insert(path->string()).second) return;  // dedup; also ends cycles
    const std::optional<std::string> contents = read_file(*path);
    if (!contents) return record_missing(include.name);
    headers_.push_back({include.name, path->string(), true, xxh3_128(*contents)});
    // __has_include only asks whether the file exists; an #include of it is found on its own.
    if (!include.probe_only) scan(*contents, path->parent_path(), depth + 1);
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

  void mark_truncated(const std::string& why) {
    truncated_ = true;
    headers_.push_back({kTruncatedMarker, "", false, Digest128{}});
    unresolved_ = "include scan cut short: " + why;
  }

  std::vector<fs::path> include_dirs_;
  fs::path working_dir_;
  std::vector<HeaderDependency> headers_;
  std::set<std::string> seen_paths_;
  std::set<std::string> missing_names_;
  std::string unresolved_;
  bool truncated_ = false;
  IncludeMacros macros_;
  std::size_t next_file_ = 0;
};

}  // namespace

// True when the directive word at `word` (after blanks) is "include..."/"import"/"embed", or a
// comment or backslash-newline that could hide one follows the introducer.
bool directive_may_include(std::string_view source, std::size_t word) {
  while (word < source.size() && is_space(source[word])) ++word;
  std::size_t end = word;
  while (end < source.size() && is_word_char(source[end])) ++end;
  const std::string_view directive = source.substr(word, end - word);
  if (directive.substr(0, 7) == "include" || directive == "import" || directive == "embed") return true;
  return end < source.size() && (source[end] == '\\' || source[end] == '/');
}

// True when some '#' (or "%:", "??=") introduces a directive that may name a header, or the text
// probes __has_include: otherwise the full scan, which copies the source and costs
// more than a memory hit itself, is skipped. Each search runs on a rare first character
// (memchr speed); "__has_include" starts with '_', frequent in OpenCL C, so it is searched with
// Boyer-Moore-Horspool.
bool may_include(std::string_view source) {
  for (std::size_t at = source.find('#'); at != std::string_view::npos; at = source.find('#', at + 1)) {
    if (directive_may_include(source, at + 1)) return true;
  }
  for (std::size_t at = source.find("%:"); at != std::string_view::npos; at = source.find("%:", at + 1)) {
    if (directive_may_include(source, at + 2)) return true;
  }
  for (std::size_t at = source.find("?\?="); at != std::string_view::npos; at = source.find("?\?=", at + 1)) {
    if (directive_may_include(source, at + 3)) return true;
  }
  static constexpr std::string_view kProbe = "__has_include";
  static const std::boyer_moore_horspool_searcher searcher(kProbe.begin(), kProbe.end());
  return std::search(source.begin(), source.end(), searcher) != source.end();
}

IncludeOptions include_options(std::string_view options) {
  IncludeOptions result;
  result.texts.emplace_back(options);
  std::size_t quotes = 0;
  for (char c : options) quotes += c == '"';
  if (quotes % 2 != 0) result.not_understood = "an unclosed quote";
  const std::vector<std::string> words = split_words(options);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    auto operand = [&](std::size_t prefix) -> std::optional<std::string> {
      if (word.size() > prefix) return word.substr(prefix);
      if (i + 1 < words.size()) return words[++i];
      return std::nullopt;
    };
    if (word == "-include") {
      if (auto file = operand(word.size())) result.forced_includes.push_back(*file);
    } else if (word.rfind("-I", 0) == 0) {
      if (auto dir = operand(2)) result.dirs.emplace_back(*dir);
    } else if ((word.rfind("-i", 0) == 0 || word.rfind("--", 0) == 0 || word == "-nostdinc" || word == "-F") &&
               result.not_understood.empty()) {
      // -isystem, -iquote, -idirafter, -imacros, -iprefix, --include-directory=...: each changes
      // which file a name resolves to in a way the scan does not model.
      result.not_understood = "the option " + word;
    }
  }
  return result;
}

std::vector<fs::path> include_dirs_from_options(std::string_view options) { return include_options(options).dirs; }

IncludeScan scan_program_includes(std::string_view source, const std::vector<fs::path>& include_dirs,
                                  const std::vector<std::string>& forced_includes, const fs::path& working_dir,
                                  const std::vector<std::string>& macro_options) {
  IncludeScanner scanner(include_dirs, working_dir);
  scanner.add_macro_options(macro_options);
  for (const std::string& name : forced_includes) scanner.scan_forced(name);
  scanner.scan(source, working_dir, 0);
  return scanner.take();
}

std::vector<HeaderDependency> scan_includes(std::string_view source,
                                            const std::vector<fs::path>& include_dirs,
                                            const fs::path& working_dir) {
  return scan_program_includes(source, include_dirs, {}, working_dir).headers;
}

}  // namespace jitcache

#include "hashing/include_macros.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <deque>

#include "hashing/predefined_macro_names.hpp"

namespace jitcache {
namespace {

// Bounds against hostile or pathological definitions; real operands stay far below them.
constexpr std::size_t kMaxTokens = 4096;
constexpr std::size_t kMaxSteps = 100000;
constexpr int kMaxDepth = 64;

// Thrown inside the expander for anything outside the supported subset; expand() turns it into
// the reason the include stays unresolved.
struct Unsupported {
  std::string why;
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string quoted_name(std::string_view name) { return "`" + std::string(name) + "`"; }

struct Token {
  enum class Kind { identifier, number, literal, punctuator } kind = Kind::punctuator;
  std::string text;
  bool space_before = false;
  std::vector<std::string> hide;  // Prosser's hide set: names this token must not expand again

  bool is(std::string_view punctuator) const { return kind == Kind::punctuator && text == punctuator; }
  bool hidden() const { return std::find(hide.begin(), hide.end(), text) != hide.end(); }
};

std::string describe(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return std::string("the character '") + c + "'";
  char code[8];
  std::snprintf(code, sizeof code, "%02x", static_cast<unsigned char>(c));
  return std::string("the byte 0x") + code;
}

// Preprocessing tokens of the subset: identifiers, pp-numbers, "..." and '...' literals, and
// one-character punctuators (spelling is all a stringification keeps, so `->` as two is fine).
std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  bool space = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (is_blank(c)) {
      space = true;
      ++i;
      continue;
    }
    Token token;
    token.space_before = space;
    space = false;
    std::size_t end = i + 1;
    if (is_identifier_start(c)) {
      while (end < text.size() && is_identifier_char(text[end])) ++end;
      if (end < text.size() && (text[end] == '"' || text[end] == '\'')) throw Unsupported{"a prefixed literal"};
      token.kind = Token::Kind::identifier;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))) {
      while (end < text.size() && (is_identifier_char(text[end]) || text[end] == '.' ||
                                   ((text[end] == '+' || text[end] == '-') && std::strchr("eEpP", text[end - 1])))) {
        ++end;
      }
      token.kind = Token::Kind::number;
    } else if (c == '"' || c == '\'') {
      while (end < text.size() && text[end] != c) end += text[end] == '\\' ? 2 : 1;
      if (end >= text.size()) throw Unsupported{"an unterminated literal"};
      ++end;
      token.kind = Token::Kind::literal;
    } else if (c == '#') {
      if (end < text.size() && text[end] == '#') ++end;
    } else if (c == '%' && end < text.size() && text[end] == ':') {
      throw Unsupported{"the %: digraph"};
    } else if (!std::strchr("/.-+*%~!=<>&|^:;,?()[]{}", c)) {
      throw Unsupported{describe(c)};
    }
    token.text = std::string(text.substr(i, end - i));
    tokens.push_back(std::move(token));
    if (tokens.size() > kMaxTokens) throw Unsupported{"more than 4096 tokens"};
    i = end;
  }
  return tokens;
}

struct Macro {
  bool function_like = false;
  std::vector<std::string> params;
  std::vector<Token> body;

  int param_index(const Token& token) const {
    if (token.kind != Token::Kind::identifier) return -1;
    const auto found = std::find(params.begin(), params.end(), token.text);
    return found == params.end() ? -1 : static_cast<int>(found - params.begin());
  }
};

// `text` is what follows the name in the definition: "(a, b) body" or " body".
Macro parse_macro(std::string_view name, std::string_view text, bool function_like) {
  Macro macro;
  macro.function_like = function_like;
  std::vector<Token> tokens = tokenize(text);
  std::size_t body_start = 0;
  if (function_like) {
    bool expect_name = true;
    for (body_start = 1;; ++body_start) {  // tokens[0] is '('
      if (body_start >= tokens.size()) throw Unsupported{quoted_name(name) + " has no closing parenthesis"};
      const Token& token = tokens[body_start];
      if (token.is(")") && (!expect_name || macro.params.empty())) break;
      const bool new_name = expect_name && token.kind == Token::Kind::identifier && token.text != "__VA_ARGS__" &&
                            macro.param_index(token) < 0;
      if (!new_name && (expect_name || !token.is(","))) {
        throw Unsupported{quoted_name(name) + " has parameters outside the subset (variadic?)"};
      }
      if (new_name) macro.params.push_back(token.text);
      expect_name = !expect_name;
    }
    ++body_start;
  }
  macro.body.assign(tokens.begin() + static_cast<std::ptrdiff_t>(body_start), tokens.end());
  for (std::size_t i = 0; i < macro.body.size(); ++i) {
    if (macro.body[i].is("##")) throw Unsupported{quoted_name(name) + " uses ## token pasting"};
    if (function_like && macro.body[i].is("#") &&
        (i + 1 == macro.body.size() || macro.param_index(macro.body[i + 1]) < 0)) {
      throw Unsupported{quoted_name(name) + " has a # not followed by a parameter"};
    }
  }
  return macro;
}

// Splits "NAME(params) body" / "NAME body" (a #define's text); empty name when it is not one.
std::pair<std::string, std::string_view> split_name(std::string_view text, bool* function_like) {
  std::size_t start = 0;
  while (start < text.size() && is_blank(text[start])) ++start;
  std::size_t end = start;
  if (end < text.size() && is_identifier_start(text[end])) {
    while (end < text.size() && is_identifier_char(text[end])) ++end;
  }
  *function_like = end < text.size() && text[end] == '(';
  return {std::string(text.substr(start, end - start)), text.substr(end)};
}

// One expansion of one operand, with Prosser's algorithm (hide sets), against the table.
class MacroExpansion {
 public:
  MacroExpansion(const IncludeMacros::Definitions& definitions, const std::set<std::string, std::less<>>& undefined,
                 std::vector<IncludeMacros::Use>* uses, std::size_t file, std::size_t line)
      : definitions_(definitions), undefined_(undefined), uses_(uses), file_(file), line_(line) {}

  std::vector<Token> expand(std::vector<Token> input, int depth) {
    if (depth > kMaxDepth) throw Unsupported{"macros nested deeper than 64"};
    std::deque<Token> pending(std::make_move_iterator(input.begin()), std::make_move_iterator(input.end()));
    std::vector<Token> out;
    while (!pending.empty()) {
      if (++steps_ > kMaxSteps) throw Unsupported{"an expansion longer than 100000 steps"};
      Token token = std::move(pending.front());
      pending.pop_front();
      if (out.size() >= kMaxTokens) throw Unsupported{"an expansion of more than 4096 tokens"};
      if (token.kind != Token::Kind::identifier || token.hidden()) {
        out.push_back(std::move(token));
        continue;
      }
      const Macro* macro = lookup(token.text);
      if (macro == nullptr || (macro->function_like && (pending.empty() || !pending.front().is("(")))) {
        out.push_back(std::move(token));
        continue;
      }
      std::vector<std::string> hide = token.hide;
      std::vector<Token> replaced;
      if (!macro->function_like) {
        hide.push_back(token.text);
        replaced = substitute(*macro, {}, hide, depth);
      } else {
        Token close;
        std::vector<std::vector<Token>> args = collect_arguments(token.text, pending, &close);
        if (macro->params.empty() && args.size() == 1 && args[0].empty()) args.clear();
        if (args.size() != macro->params.size()) {
          throw Unsupported{quoted_name(token.text) + " called with the wrong number of arguments"};
        }
        std::erase_if(hide, [&close](const std::string& name) {
          return std::find(close.hide.begin(), close.hide.end(), name) == close.hide.end();
        });
        hide.push_back(token.text);
        replaced = substitute(*macro, args, hide, depth);
      }
      // Compilers differ on the spacing an empty expansion leaves behind; a stringified name would too.
      if (replaced.empty()) throw Unsupported{quoted_name(token.text) + " expands to nothing"};
      replaced.front().space_before = token.space_before;
      pending.insert(pending.begin(), std::make_move_iterator(replaced.begin()),
                     std::make_move_iterator(replaced.end()));
      if (pending.size() > kMaxTokens) throw Unsupported{"an expansion of more than 4096 tokens"};
    }
    return out;
  }

 private:
  // The macro `name` stands for at this #include, null when it is none; throws where the scan
  // cannot know that exactly.
  const Macro* lookup(const std::string& name) {
    if (compiler_may_predefine(name)) throw Unsupported{quoted_name(name) + " may be a macro the compiler predefines"};
    if (undefined_.count(name) != 0) throw Unsupported{quoted_name(name) + " is #undef'd"};
    const auto found = definitions_.find(name);
    const std::size_t count = found == definitions_.end() ? 0 : found->second.size();
    uses_->push_back({name, count});
    if (count == 0) return nullptr;
    if (count > 1) throw Unsupported{quoted_name(name) + " is defined more than once"};
    const IncludeMacros::Definition& definition = found->second.front();
    if (definition.unusable_text) throw Unsupported{"the option defining " + quoted_name(name) + " has a quote or backslash"};
    if (definition.conditional) throw Unsupported{quoted_name(name) + " is defined inside #if/#ifdef"};
    if (!definition.from_options && (definition.file != file_ || definition.line >= line_)) {
      throw Unsupported{quoted_name(name) + " is defined in another file or after the #include"};
    }
    auto [parsed, inserted] = parsed_.try_emplace(name);
    if (inserted) parsed->second = parse_macro(name, definition.text, definition.function_like);
    return &parsed->second;
  }

  // The arguments of a call whose name was just taken from `pending` (next: its '(').
  static std::vector<std::vector<Token>> collect_arguments(const std::string& name, std::deque<Token>& pending,
                                                           Token* close) {
    pending.pop_front();
    std::vector<std::vector<Token>> args(1);
    for (int nesting = 1;;) {
      if (pending.empty()) throw Unsupported{quoted_name(name) + " called without a closing parenthesis"};
      Token token = std::move(pending.front());
      pending.pop_front();
      if (token.is("(")) {
        ++nesting;
      } else if (token.is(")") && --nesting == 0) {
        *close = std::move(token);
        return args;
      } else if (token.is(",") && nesting == 1) {
        args.emplace_back();
        continue;
      }
      args.back().push_back(std::move(token));
    }
  }

  std::vector<Token> substitute(const Macro& macro, const std::vector<std::vector<Token>>& args,
                                const std::vector<std::string>& hide, int depth) {
    std::vector<Token> out;
    for (std::size_t i = 0; i < macro.body.size(); ++i) {
      const Token& token = macro.body[i];
      if (macro.function_like && token.is("#")) {
        Token text = stringify(args[static_cast<std::size_t>(macro.param_index(macro.body[++i]))]);
        text.space_before = token.space_before;
        out.push_back(std::move(text));
      } else if (const int param = macro.param_index(token); param >= 0) {
        std::vector<Token> expanded = expand(args[static_cast<std::size_t>(param)], depth + 1);
        if (expanded.empty()) throw Unsupported{"an argument that expands to nothing"};
        expanded.front().space_before = token.space_before;
        out.insert(out.end(), std::make_move_iterator(expanded.begin()), std::make_move_iterator(expanded.end()));
      } else {
        out.push_back(token);
      }
    }
    for (Token& token : out) {
      for (const std::string& name : hide) {
        if (std::find(token.hide.begin(), token.hide.end(), name) == token.hide.end()) token.hide.push_back(name);
      }
    }
    return out;
  }

  // `#param`: the argument's spelling. Inner whitespace and literals (escaping) are left out of
  // the subset: preprocessors disagree on the spaces around expanded macros.
  static Token stringify(const std::vector<Token>& arg) {
    if (arg.empty()) throw Unsupported{"an empty argument to #"};
    Token result;
    result.kind = Token::Kind::literal;
    result.text = "\"";
    for (std::size_t i = 0; i < arg.size(); ++i) {
      if (i > 0 && arg[i].space_before) throw Unsupported{"whitespace inside a stringified argument"};
      if (arg[i].kind == Token::Kind::literal) throw Unsupported{"a literal inside a stringified argument"};
      result.text += arg[i].text;
    }
    result.text += "\"";
    return result;
  }

  const IncludeMacros::Definitions& definitions_;
  const std::set<std::string, std::less<>>& undefined_;
  std::vector<IncludeMacros::Use>* uses_;
  std::size_t file_;
  std::size_t line_;
  std::size_t steps_ = 0;
  std::map<std::string, Macro, std::less<>> parsed_;
};

}  // namespace

void IncludeMacros::define(std::string name, Definition definition) {
  definitions_[std::move(name)].push_back(std::move(definition));
}

void IncludeMacros::add_options(std::string_view options) {
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < options.size();) {
    while (i < options.size() && is_blank(options[i])) ++i;
    std::size_t end = i;
    while (end < options.size() && !is_blank(options[end])) ++end;
    if (end > i) words.push_back(options.substr(i, end - i));
    i = end;
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word.size() < 2 || word[0] != '-' || (word[1] != 'D' && word[1] != 'U')) continue;
    std::string_view operand = word.substr(2);
    if (operand.empty()) {
      if (i + 1 == words.size()) continue;
      operand = words[++i];
    }
    if (word[1] == 'U') {
      add_undef(operand);
      continue;
    }
    // As the compiler does: NAME=BODY becomes "#define NAME BODY", a bare NAME "#define NAME 1".
    const std::size_t equals = operand.find('=');
    std::string text(operand.substr(0, equals));
    text += equals == std::string_view::npos ? std::string(" 1") : " " + std::string(operand.substr(equals + 1));
    bool function_like = false;
    auto [name, rest] = split_name(text, &function_like);
    if (name.empty()) continue;  // not a definition; the compiler rejects it
    Definition definition;
    definition.text = std::string(rest);
    definition.function_like = function_like;
    definition.from_options = true;
    definition.unusable_text = operand.find_first_of("\"'\\") != std::string_view::npos;
    define(std::move(name), std::move(definition));
  }
}

void IncludeMacros::add_define(std::string_view rest, std::size_t file, std::size_t line, bool conditional) {
  bool function_like = false;
  auto [name, text] = split_name(rest, &function_like);
  if (name.empty()) return;
  Definition definition;
  definition.text = std::string(text);
  definition.function_like = function_like;
  definition.file = file;
  definition.line = line;
  definition.conditional = conditional;
  define(std::move(name), std::move(definition));
}

void IncludeMacros::add_undef(std::string_view rest) {
  bool function_like = false;
  const std::string name = split_name(rest, &function_like).first;
  if (!name.empty()) undefined_.insert(name);
}

ComputedInclude IncludeMacros::expand(std::string_view operand, std::size_t file, std::size_t line) {
  try {
    MacroExpansion expansion(definitions_, undefined_, &uses_, file, line);
    const std::vector<Token> result = expansion.expand(tokenize(operand), 0);
    if (result.size() != 1 || result[0].kind != Token::Kind::literal || result[0].text.front() != '"') {
      throw Unsupported{"it does not expand to one \"string literal\""};
    }
    std::string name = result[0].text.substr(1, result[0].text.size() - 2);
    if (name.empty() || name.find('\\') != std::string::npos) {
      throw Unsupported{"it expands to an empty name or one with a backslash"};
    }
    return {std::move(name), {}};
  } catch (const Unsupported& unsupported) {
    return {{}, unsupported.why};
  }
}

std::string IncludeMacros::recheck() const {
  for (const Use& use : uses_) {
    if (undefined_.count(use.name) != 0) return quoted_name(use.name) + " is #undef'd";
    const auto found = definitions_.find(use.name);
    const std::size_t now = found == definitions_.end() ? 0 : found->second.size();
    if (now != use.definitions) {
      return quoted_name(use.name) + (use.definitions == 0 ? " is defined after a computed #include looked it up"
                                                           : " is defined more than once");
    }
  }
  return {};
}

}  // namespace jitcache

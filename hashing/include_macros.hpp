// Exact macro expansion for computed #include operands (`#include M2S(INCLUDE_PATH/x.h)`), over a
// deliberately small subset of the preprocessor: object-like and function-like macros from -D
// options and #define lines, # stringification, rescanning. The scan ignores #if, so a definition
// is used only where its meaning cannot depend on one. Anything else yields a reason instead of a
// name, and the build stays uncacheable (docs/design-decisions.md, the key completeness rule):
//   - a name defined more than once, #undef'd or -U'd anywhere, or defined inside #if/#ifdef;
//   - a #define in another file than the #include, or after it;
//   - a name the compiler may predefine (predefined_macro_names.hpp), looked up while expanding;
//   - ## pasting, variadic macros, a macro that expands to nothing, whitespace or a literal inside
//     a stringified argument (compilers space those differently), a result other than one plain
//     "string literal".
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

struct ComputedInclude {
  std::string name;        // the header name, when resolved (a quoted include)
  std::string unresolved;  // non-empty: why the operand cannot be resolved exactly
};

class IncludeMacros {
 public:
  // -D NAME, -D NAME=BODY, -D NAME(PARAMS)=BODY (separate or joined), -U NAME, in order. Words are
  // split at whitespace only: drivers differ on quotes, so a definition with a quote or a
  // backslash is recorded as one the expander must not use.
  void add_options(std::string_view options);
  // `#define` / `#undef` of a scanned file: `rest` is the text after the directive word. `file`
  // names the file (any id unique per file), `line` orders lines within it, `conditional` is true
  // inside #if/#ifdef/#ifndef.
  void add_define(std::string_view rest, std::size_t file, std::size_t line, bool conditional);
  void add_undef(std::string_view rest);
  // The operand of a computed `#include` at `line` of `file` (the text after the word `include`).
  ComputedInclude expand(std::string_view operand, std::size_t file, std::size_t line);
  // After the whole scan: empty, or why an earlier expansion may differ from the compiler's (a name
  // it used, or looked up and found undefined, was defined or #undef'd later in the scan).
  std::string recheck() const;

  // What the table holds (include_macros.cpp reads it while expanding).
  struct Definition {
    std::string text;  // after the name: "(params) body" for function-like, " body" otherwise
    bool function_like = false;
    bool from_options = false;
    bool unusable_text = false;  // a quote or backslash in an option word
    std::size_t file = 0;
    std::size_t line = 0;
    bool conditional = false;
  };
  struct Use {
    std::string name;
    std::size_t definitions;  // how many definitions the name had when the expansion looked it up
  };
  using Definitions = std::map<std::string, std::vector<Definition>, std::less<>>;

 private:
  void define(std::string name, Definition definition);

  Definitions definitions_;
  std::set<std::string, std::less<>> undefined_;  // names #undef'd or -U'd anywhere
  std::vector<Use> uses_;
};

}  // namespace jitcache

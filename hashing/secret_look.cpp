#include "hashing/secret_look.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace jitcache {
namespace {

std::string upper_case(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

bool contains_any(const std::string& upper, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view part) { return upper.find(part) != std::string::npos; });
}

bool is_token_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// A URL with userinfo ("postgres://app:pw@db/x", "http://u:pw@proxy"): the part before the '@',
// within the authority, is a credential.
bool holds_url_credentials(std::string_view value, std::size_t scheme_end) {
  const std::size_t start = scheme_end + 3;
  const std::string_view authority = value.substr(start, value.find_first_of("/?# ", start) - start);
  return authority.find('@') != std::string_view::npos;
}

// A path segment of a URL that is an opaque token (a webhook's secret: hooks.slack.com/services/
// T0/B0/<24 characters>, discord.com/api/webhooks/<id>/<68 characters>): at least 20 token
// characters holding both letters and digits. Words, versions and short ids are not.
bool path_holds_a_token(std::string_view value, std::size_t scheme_end) {
  const std::size_t path = value.find_first_of("/?#", scheme_end + 3);
  if (path == std::string_view::npos) return false;
  std::size_t run = 0;
  bool letter = false, digit = false;
  for (std::size_t at = path; at <= value.size(); ++at) {
    const char c = at < value.size() ? value[at] : '/';
    if (is_token_char(c)) {
      ++run;
      letter |= std::isalpha(static_cast<unsigned char>(c)) != 0;
      digit |= std::isdigit(static_cast<unsigned char>(c)) != 0;
      continue;
    }
    if (run >= 20 && letter && digit) return true;
    run = 0;
    letter = digit = false;
  }
  return false;
}

// `name=value` pairs of a connection string or a query (separated by ';', '&', '?', ',' or
// whitespace) whose name says credential: Azure's `AccountKey=` and `SharedAccessSignature=`,
// JDBC's `?password=`, a SAS URL's `&sig=`.
bool holds_a_secret_pair(std::string_view value) {
  for (std::size_t equals = value.find('='); equals != std::string_view::npos; equals = value.find('=', equals + 1)) {
    std::size_t start = equals;
    while (start > 0 && value[start - 1] != ';' && value[start - 1] != '&' && value[start - 1] != '?' &&
           value[start - 1] != ',' && !std::isspace(static_cast<unsigned char>(value[start - 1]))) {
      --start;
    }
    const std::string name = upper_case(value.substr(start, equals - start));
    if (name.empty()) continue;
    if (contains_any(name, {"KEY", "PASS", "PWD", "SECRET", "TOKEN", "CREDENTIAL", "AUTH", "SIGNATURE"}) ||
        name == "SIG") {
      return true;
    }
  }
  return false;
}

// Prefixes of tokens that services hand out (Stripe, GitHub, GitLab, Slack, AWS access key ids,
// Google API keys).
bool is_a_service_token(std::string_view value) {
  static constexpr std::string_view kPrefixes[] = {"sk_live_", "sk_test_", "rk_live_", "rk_test_", "ghp_",  "gho_",
                                                   "ghs_",     "ghu_",     "github_pat_", "glpat-", "xoxb-", "xoxp-",
                                                   "xoxa-",    "AKIA",     "AIza"};
  for (std::size_t word = 0; word < value.size();) {
    while (word < value.size() && !is_token_char(value[word])) ++word;
    const std::string_view rest = value.substr(word);
    for (std::string_view prefix : kPrefixes) {
      if (rest.size() >= prefix.size() + 8 && rest.substr(0, prefix.size()) == prefix) return true;
    }
    while (word < value.size() && is_token_char(value[word])) ++word;
  }
  return false;
}

}  // namespace

bool name_looks_like_a_secret(std::string_view name) {
  static constexpr std::string_view kWords[] = {"PASS", "PWD", "KEY", "KEYS", "AUTH", "PAT", "SESSION", "JWT", "DSN"};
  const std::string upper = upper_case(name);
  if (contains_any(upper, {"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "APIKEY",
                           "PRIVATE_KEY", "COOKIE", "SSHPASS"})) {
    return true;
  }
  if (upper == "PWD") return false;  // the shell's working directory
  std::string_view rest(upper);
  while (!rest.empty()) {
    const std::size_t end = rest.find('_');
    const std::string_view word = rest.substr(0, end);
    if (std::find(std::begin(kWords), std::end(kWords), word) != std::end(kWords)) return true;
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return false;
}

bool value_looks_like_a_secret(std::string_view value) {
  for (std::size_t scheme = value.find("://"); scheme != std::string_view::npos;
       scheme = value.find("://", scheme + 3)) {
    if (holds_url_credentials(value, scheme) || path_holds_a_token(value, scheme)) return true;
  }
  return holds_a_secret_pair(value) || is_a_service_token(value);
}

}  // namespace jitcache

#include "store/remote/url_parts.hpp"

#include <cctype>
#include <charconv>

namespace jitcache {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

}  // namespace

std::string UrlCredentials::redacted() const {
  if (user.empty() && password.empty()) return {};
  return user + (password.empty() ? "" : ":***") + "@";
}

std::string HostPort::text() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<int> parse_number(std::string_view text, int max) {
  int value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > max) return std::nullopt;
  return value;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int high = hex_value(text[i + 1]);
    int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

std::optional<std::string_view> take_credentials(std::string_view text, UrlCredentials* credentials,
                                                 std::string* error) {
  std::size_t at = text.substr(0, text.find('/')).rfind('@');
  if (at == std::string_view::npos) return text;
  std::string_view userinfo = text.substr(0, at);
  std::size_t colon = userinfo.find(':');
  std::optional<std::string> user = percent_decode(userinfo.substr(0, colon));
  std::optional<std::string> password =
      percent_decode(colon == std::string_view::npos ? std::string_view() : userinfo.substr(colon + 1));
  if (!user || !password) {
    *error = "bad percent-encoding in the credentials";
    return std::nullopt;
  }
  if (colon == std::string_view::npos) {
    password = user;
    user = std::string();
  }
  credentials->user = *user;
  credentials->password = *password;
  return text.substr(at + 1);
}

std::optional<HostPort> parse_host_port(std::string_view authority, int default_port, std::string* error) {
  HostPort out;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:6379
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      *error = "unterminated [IPv6] host";
      return std::nullopt;
    }
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view tail = authority.substr(close + 1);
    if (!tail.empty() && tail.front() != ':') {
      *error = "unexpected text after the host";
      return std::nullopt;
    }
    if (!tail.empty()) port = tail.substr(1);
  } else {
    std::size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  const std::string default_text = std::to_string(default_port);
  if (port.empty() && (authority.empty() || authority.back() != ':')) port = default_text;
  if (out.host.empty()) {
    *error = "no host";
    return std::nullopt;
  }
  std::optional<int> port_number = parse_number(port, 65535);
  if (!port_number || *port_number == 0) {
    *error = "bad port '" + std::string(port) + "'";
    return std::nullopt;
  }
  out.port = *port_number;
  return out;
}

}  // namespace jitcache

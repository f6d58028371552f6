// The pieces remote URLs are made of, read alike by every scheme's parser (store/remote/*_scheme.cpp):
// percent-decoding, "[user]:password@" credentials, "host[:port]" with an IPv6 host in brackets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache {

struct UrlCredentials {
  std::string user;      // empty: the password alone (or nothing)
  std::string password;  // empty: none

  // "user:***@", ":***@", "user@" or "": how a redacted URL shows them.
  std::string redacted() const;
};

struct HostPort {
  std::string host;  // an IPv6 host without its brackets
  int port = 0;

  // "host:port", "[::1]:port".
  std::string text() const;
};

// A whole decimal number from 0 to `max`.
std::optional<int> parse_number(std::string_view text, int max);

std::optional<std::string> percent_decode(std::string_view text);

// "[user]:password@rest" -> the percent-decoded credentials, returns rest; no '@': text unchanged.
// Userinfo ends before the first '/' (RFC 3986): an '@' in a path is never a password. A lone
// value ("secret@host") is the password, as redis-cli reads it.
std::optional<std::string_view> take_credentials(std::string_view text, UrlCredentials* credentials,
                                                 std::string* error);

// "host", "host:port", "[v6]", "[v6]:port" (no credentials, no path); `default_port` when none is
// written. A bad form gives nullopt and a one-line reason.
std::optional<HostPort> parse_host_port(std::string_view authority, int default_port, std::string* error);

}  // namespace jitcache

// JITCACHE_REMOTE URLs:
//   redis://[[user]:password@]host[:port][/db]        TCP (port 6379 by default)
//   redis+unix://[[user]:password@]/path/to.sock[?db=N]  Unix socket (also redis+unix:/path)
//   http[s]://[user:password@]host[:port][/path]     GET/PUT of records below /path (store/http_remote.hpp)
//   file:///absolute/dir                             a shared (network) directory (store/file_remote.hpp)
// user and password are percent-decoded; an IPv6 host is written in brackets. Several remotes,
// asked in order: URLs separated by '|' or white space (parse_remote_urls).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

struct RemoteEndpoint {
  enum class Kind { redis, http, file };
  Kind kind = Kind::redis;
  bool unix_socket = false;
  bool tls = false;         // https
  std::string path;         // HTTP: the base path, without its trailing '/' ("" for the root); file: the directory
  std::string host;         // TCP only
  int port = 6379;          // TCP only (HTTP: 80, HTTPS: 443 by default)
  std::string socket_path;  // Unix socket only
  std::string user;         // empty: AUTH with the password only (or no AUTH)
  std::string password;     // empty: no AUTH
  int db = 0;

  // The URL without the password, for logs and traces.
  std::string redacted() const;
  // HTTP: scheme://host:port/path, without credentials (they go in a header, never in a URL).
  std::string base_url() const;
};

// The schemes above ("redis", "redis+unix", "http", "https", "file"): what `jitcache --version`
// lists; parse_remote_url reads each.
std::span<const std::string_view> remote_schemes();

// nullopt and a one-line reason when the URL is not one of the forms above.
std::optional<RemoteEndpoint> parse_remote_url(std::string_view url, std::string* error);

// JITCACHE_REMOTE as a list: "url|url", or separated by white space (a URL has neither). Empty
// entries are skipped; the first bad URL makes the whole list refused (nullopt, its reason).
std::optional<std::vector<RemoteEndpoint>> parse_remote_urls(std::string_view urls, std::string* error);

}  // namespace jitcache

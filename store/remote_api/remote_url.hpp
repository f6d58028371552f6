// JITCACHE_REMOTE URLs:
//   redis://[[user]:password@]host[:port][/db]        TCP (port 6379 by default)
//   redis+unix://[[user]:password@]/path/to.sock[?db=N]  Unix socket (also redis+unix:/path)
//   http[s]://[user:password@]host[:port][/path]     GET/PUT of records below /path (store/remote/http_remote.hpp)
//   file:///absolute/dir                             a shared (network) directory (store/remote/file_remote.hpp)
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

// Every URL scheme jitcache speaks, one row each: parse_remote_url reads the table, `jitcache
// --version` lists it, `jitcache doctor` gives its advice. A new remote is its client in
// store/remote/, a row here and a case in the tiers' open_remote (docs/design-decisions.md).
struct RemoteScheme {
  std::string_view name;    // "redis", "redis+unix", "http", "https", "file"
  std::string_view prefix;  // what a URL of it starts with ("redis://", "file:")
  RemoteEndpoint::Kind kind;
  // Reads what follows the prefix; nullopt and a one-line reason when it is not the scheme's form.
  std::optional<RemoteEndpoint> (*parse)(std::string_view rest, std::string* error);
  std::string_view advice;  // what to check when a remote of this scheme does not answer
};
std::span<const RemoteScheme> remote_schemes();
const RemoteScheme& remote_scheme(RemoteEndpoint::Kind kind);  // the first row of the kind

// nullopt and a one-line reason when the URL is not one of the forms above.
std::optional<RemoteEndpoint> parse_remote_url(std::string_view url, std::string* error);

// JITCACHE_REMOTE as a list: "url|url", or separated by white space (a URL has neither). Empty
// entries are skipped; the first bad URL makes the whole list refused (nullopt, its reason).
std::optional<std::vector<RemoteEndpoint>> parse_remote_urls(std::string_view urls, std::string* error);

}  // namespace jitcache

// JITCACHE_REMOTE URLs:
//   redis://[[user]:password@]host[:port][/db]        TCP (port 6379 by default)
//   redis+unix://[[user]:password@]/path/to.sock[?db=N]  Unix socket (also redis+unix:/path)
// user and password are percent-decoded; an IPv6 host is written in brackets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitcache {

struct RemoteEndpoint {
  bool unix_socket = false;
  std::string host;         // TCP only
  int port = 6379;          // TCP only
  std::string socket_path;  // Unix socket only
  std::string user;         // empty: AUTH with the password only (or no AUTH)
  std::string password;     // empty: no AUTH
  int db = 0;

  // The URL without the password, for logs and traces.
  std::string redacted() const;
};

// nullopt and a one-line reason when the URL is not one of the forms above.
std::optional<RemoteEndpoint> parse_remote_url(std::string_view url, std::string* error);

}  // namespace jitcache

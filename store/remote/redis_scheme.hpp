// The redis:// and redis+unix: schemes (the client: store/remote/redis_remote.hpp):
//   redis://[[user]:password@]host[:port][/db]           TCP (port 6379 by default)
//   redis+unix://[[user]:password@]/path/to.sock[?db=N]  a Unix socket (also redis+unix:/path)
#pragma once

#include <string>

#include "store/remote/url_parts.hpp"
#include "store/remote_api/remote_url.hpp"

namespace jitcache {

struct RedisEndpoint final : RemoteEndpoint {
  bool unix_socket = false;
  HostPort address{{}, 6379};  // TCP only
  std::string socket_path;     // Unix socket only
  UrlCredentials credentials;  // empty password: no AUTH; empty user: AUTH with the password only
  int db = 0;

  std::string redacted() const override;
  std::unique_ptr<RemoteClient> open(RemoteConfig config) const override;  // in the client's .cpp
};

extern const RemoteScheme kRedisScheme;
extern const RemoteScheme kRedisUnixScheme;

}  // namespace jitcache

// The http:// and https:// schemes (the client: store/remote/http_remote.hpp):
//   http[s]://[user:password@]host[:port][/path]   GET/PUT of records below /path
#pragma once

#include <string>

#include "store/remote/url_parts.hpp"
#include "store/remote_api/remote_url.hpp"

namespace jitcache {

// "Authorization: Bearer <token>" instead of the URL's user:password (a Secret setting).
inline constexpr std::string_view kBearerTokenSetting = "remote_bearer_token";

struct HttpEndpoint final : RemoteEndpoint {
  bool tls = false;                       // https
  HostPort address;                       // port 80, 443 by default
  std::string path;                       // the base path, without its trailing '/' ("" for the root)
  UrlCredentials credentials;             // basic auth, unless remote_bearer_token is set

  // scheme://host:port/path, without credentials (they go in a header, never in a URL).
  std::string base_url() const;
  std::string redacted() const override;
  bool trusts_ca_file() const override { return tls; }
  std::unique_ptr<RemoteClient> open(RemoteConfig config) const override;  // in the client's .cpp
};

extern const RemoteScheme kHttpScheme;
extern const RemoteScheme kHttpsScheme;

}  // namespace jitcache

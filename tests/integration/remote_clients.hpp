// Remote endpoints and clients for tests that look at what only one scheme's client knows
// (record names and paths, a directory's facts): read from a URL and opened as the engine would
// (store/remote/remote_schemes.hpp), but typed.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "store/remote/remote_schemes.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache::testing {

// The endpoint of one of the test's own URLs (a URL the schemes refuse is the test's bug: throws).
inline std::shared_ptr<const RemoteEndpoint> endpoint_of(const std::string& url) {
  std::string error;
  std::shared_ptr<const RemoteEndpoint> endpoint = parse_remote_url(remote_schemes(), url, &error);
  if (!endpoint) throw std::invalid_argument(url + ": " + error);
  return endpoint;
}

// The scheme's own client of `config`, whose endpoint must be that scheme's.
template <class Client>
Client client_of(const RemoteConfig& config) {
  return Client(dynamic_cast<const typename Client::Endpoint&>(*config.endpoint), config);
}

}  // namespace jitcache::testing

#include "store/remote/http_scheme.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kHttpAdvice =
    "check the server, the credentials (URL or JITCACHE_REMOTE_BEARER_TOKEN), JITCACHE_REMOTE_CA_FILE and "
    "JITCACHE_REMOTE_TIMEOUT_MS (docs/remote.md)";
constexpr std::string_view kHttpSettings[] = {kBearerTokenSetting};

// The path is a folder on the server, kept as given (it is sent, never decoded); '?' and '#' have
// no meaning there and are refused.
std::unique_ptr<RemoteEndpoint> parse_http(std::string_view rest, bool tls, std::string* error) {
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (path.find_first_of("?# ") != std::string_view::npos) {
    *error = "no query, fragment or space in an http(s) remote's path";
    return nullptr;
  }
  auto endpoint = std::make_unique<HttpEndpoint>();
  std::optional<std::string_view> host = take_credentials(authority, &endpoint->credentials, error);
  if (!host) return nullptr;
  std::optional<HostPort> address = parse_host_port(*host, tls ? 443 : 80, error);
  if (!address) return nullptr;
  endpoint->address = std::move(*address);
  endpoint->tls = tls;
  while (path.ends_with('/')) path.remove_suffix(1);
  endpoint->path = std::string(path);
  return endpoint;
}

}  // namespace

std::string HttpEndpoint::base_url() const { return std::string(tls ? "https://" : "http://") + address.text() + path; }

std::string HttpEndpoint::redacted() const {
  return std::string(tls ? "https://" : "http://") + credentials.redacted() + address.text() + path;
}

const RemoteScheme kHttpScheme{
    "http", "http://", "http://cache.example.org/jit",
    [](std::string_view rest, std::string* error) { return parse_http(rest, false, error); }, kHttpSettings, kHttpAdvice};
const RemoteScheme kHttpsScheme{
    "https", "https://", "https://cache.example.org:8443/jit",
    [](std::string_view rest, std::string* error) { return parse_http(rest, true, error); }, kHttpSettings, kHttpAdvice};

}  // namespace jitcache

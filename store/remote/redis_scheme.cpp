#include "store/remote/redis_scheme.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kRedisAdvice = "check the server, the password and JITCACHE_REMOTE_TIMEOUT_MS (docs/remote.md)";

std::unique_ptr<RemoteEndpoint> parse_tcp(std::string_view rest, std::string* error) {
  auto endpoint = std::make_unique<RedisEndpoint>();
  std::optional<std::string_view> after = take_credentials(rest, &endpoint->credentials, error);
  if (!after) return nullptr;
  std::string_view authority = *after, path;
  if (std::size_t slash = authority.find('/'); slash != std::string_view::npos) {
    path = authority.substr(slash + 1);
    authority = authority.substr(0, slash);
  }
  std::optional<HostPort> address = parse_host_port(authority, 6379, error);
  if (!address) return nullptr;
  endpoint->address = std::move(*address);
  if (!path.empty()) {
    std::optional<int> db = parse_number(path, 1 << 20);
    if (!db) {
      *error = "bad database number '" + std::string(path) + "'";
      return nullptr;
    }
    endpoint->db = *db;
  }
  return endpoint;
}

std::unique_ptr<RemoteEndpoint> parse_unix(std::string_view rest, std::string* error) {
  auto endpoint = std::make_unique<RedisEndpoint>();
  endpoint->unix_socket = true;
  std::string_view path = rest;
  if (rest.starts_with("//")) {  // redis+unix://[credentials@]/abs/path; else redis+unix:/abs/path
    rest.remove_prefix(2);
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (!authority.empty()) {
      if (authority.find('@') == std::string_view::npos) {
        *error = "the socket path must be absolute";
        return nullptr;
      }
      std::optional<std::string_view> host = take_credentials(authority, &endpoint->credentials, error);
      if (!host) return nullptr;
      if (!host->empty()) {
        *error = "a Unix socket URL has no host";
        return nullptr;
      }
    }
  }
  if (std::size_t query = path.find('?'); query != std::string_view::npos) {
    std::string_view parameter = path.substr(query + 1);
    path = path.substr(0, query);
    std::optional<int> db = parameter.starts_with("db=") ? parse_number(parameter.substr(3), 1 << 20) : std::nullopt;
    if (!db) {
      *error = "unknown parameter '" + std::string(parameter) + "' (only db=N)";
      return nullptr;
    }
    endpoint->db = *db;
  }
  if (path.empty() || path.front() != '/') {
    *error = "the socket path must be absolute";
    return nullptr;
  }
  endpoint->socket_path = std::string(path);
  return endpoint;
}

}  // namespace

std::string RedisEndpoint::redacted() const {
  if (unix_socket) {
    return "redis+unix://" + credentials.redacted() + socket_path + (db ? "?db=" + std::to_string(db) : "");
  }
  return "redis://" + credentials.redacted() + address.text() + (db ? "/" + std::to_string(db) : "");
}

const RemoteScheme kRedisScheme{"redis", "redis://", "redis://host:6379", parse_tcp, {}, kRedisAdvice};
const RemoteScheme kRedisUnixScheme{"redis+unix", "redis+unix:", "redis+unix:///run/redis.sock", parse_unix, {}, kRedisAdvice};

}  // namespace jitcache

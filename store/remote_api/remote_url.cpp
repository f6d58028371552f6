#include "store/remote_api/remote_url.hpp"

#include <cctype>
#include <charconv>

namespace jitcache {
namespace {

std::optional<int> parse_number(std::string_view text, int max) {
  int value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > max) return std::nullopt;
  return value;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
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

// "[user]:password@rest" -> credentials into `endpoint`, returns rest. No '@': unchanged. Userinfo
// ends before the first '/' (RFC 3986): an '@' in a path is never a password.
std::optional<std::string_view> take_credentials(std::string_view text, RemoteEndpoint& endpoint,
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
  if (colon == std::string_view::npos) {  // "secret@host": a lone value is the password, as in redis-cli
    password = user;
    user = std::string();
  }
  endpoint.user = *user;
  endpoint.password = *password;
  return text.substr(at + 1);
}

std::optional<RemoteEndpoint> parse_tcp(std::string_view rest, std::string* error, int default_port = 6379) {
  RemoteEndpoint endpoint;
  std::optional<std::string_view> after = take_credentials(rest, endpoint, error);
  if (!after) return std::nullopt;
  std::string_view authority = *after, path;
  if (std::size_t slash = authority.find('/'); slash != std::string_view::npos) {
    path = authority.substr(slash + 1);
    authority = authority.substr(0, slash);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:6379
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      *error = "unterminated [IPv6] host";
      return std::nullopt;
    }
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view tail = authority.substr(close + 1);
    if (!tail.empty() && tail.front() != ':') {
      *error = "unexpected text after the host";
      return std::nullopt;
    }
    if (!tail.empty()) port = tail.substr(1);
  } else {
    std::size_t colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  const std::string default_text = std::to_string(default_port);
  if (port.empty() && (authority.empty() || authority.back() != ':')) port = default_text;
  if (endpoint.host.empty()) {
    *error = "no host";
    return std::nullopt;
  }
  std::optional<int> port_number = parse_number(port, 65535);
  if (!port_number || *port_number == 0) {
    *error = "bad port '" + std::string(port) + "'";
    return std::nullopt;
  }
  endpoint.port = *port_number;
  if (!path.empty()) {
    std::optional<int> db = parse_number(path, 1 << 20);
    if (!db) {
      *error = "bad database number '" + std::string(path) + "'";
      return std::nullopt;
    }
    endpoint.db = *db;
  }
  return endpoint;
}

// http[s]://[user:password@]host[:port][/path]: the path is a folder on the server, kept as given
// (it is sent, never decoded); '?' and '#' have no meaning there and are refused.
std::optional<RemoteEndpoint> parse_http(std::string_view rest, bool tls, std::string* error) {
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (path.find_first_of("?# ") != std::string_view::npos) {
    *error = "no query, fragment or space in an http(s) remote's path";
    return std::nullopt;
  }
  std::optional<RemoteEndpoint> endpoint = parse_tcp(authority, error, tls ? 443 : 80);
  if (!endpoint) return std::nullopt;
  endpoint->kind = RemoteEndpoint::Kind::http;
  endpoint->tls = tls;
  while (path.ends_with('/')) path.remove_suffix(1);
  endpoint->path = std::string(path);
  return endpoint;
}

// file:///abs/dir (ccache's form; also file:/abs/dir): an absolute, percent-decoded directory with
// no "." or ".." step (the path is the remote's identity: two spellings must not be two caches).
std::optional<RemoteEndpoint> parse_file(std::string_view rest, std::string* error) {
  if (rest.starts_with("//")) {
    rest.remove_prefix(2);
    if (!rest.starts_with("/")) {
      *error = "a file URL names no host: file:///absolute/dir";
      return std::nullopt;
    }
  }
  std::optional<std::string> path = percent_decode(rest);
  if (!path || path->empty() || path->front() != '/' || path->find('\0') != std::string::npos) {
    *error = "a file remote needs an absolute directory: file:///absolute/dir";
    return std::nullopt;
  }
  while (path->size() > 1 && path->back() == '/') path->pop_back();
  for (std::size_t start = 1; start <= path->size();) {
    std::size_t end = std::min(path->find('/', start), path->size());
    std::string_view step = std::string_view(*path).substr(start, end - start);
    if (step == "." || step == ".." || (step.empty() && end < path->size())) {
      *error = "a file remote's directory is written without '.', '..' or '//' steps";
      return std::nullopt;
    }
    start = end + 1;
  }
  RemoteEndpoint endpoint;
  endpoint.kind = RemoteEndpoint::Kind::file;
  endpoint.path = std::move(*path);
  endpoint.port = 0;
  return endpoint;
}

std::optional<RemoteEndpoint> parse_unix(std::string_view rest, std::string* error) {
  RemoteEndpoint endpoint;
  endpoint.unix_socket = true;
  std::string_view path = rest;
  if (rest.starts_with("//")) {  // redis+unix://[credentials@]/abs/path; else redis+unix:/abs/path
    rest.remove_prefix(2);
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    if (!authority.empty()) {
      if (authority.find('@') == std::string_view::npos) {
        *error = "the socket path must be absolute";
        return std::nullopt;
      }
      std::optional<std::string_view> host = take_credentials(authority, endpoint, error);
      if (!host) return std::nullopt;
      if (!host->empty()) {
        *error = "a Unix socket URL has no host";
        return std::nullopt;
      }
    }
  }
  if (std::size_t query = path.find('?'); query != std::string_view::npos) {
    std::string_view parameter = path.substr(query + 1);
    path = path.substr(0, query);
    std::optional<int> db = parameter.starts_with("db=") ? parse_number(parameter.substr(3), 1 << 20) : std::nullopt;
    if (!db) {
      *error = "unknown parameter '" + std::string(parameter) + "' (only db=N)";
      return std::nullopt;
    }
    endpoint.db = *db;
  }
  if (path.empty() || path.front() != '/') {
    *error = "the socket path must be absolute";
    return std::nullopt;
  }
  endpoint.socket_path = std::string(path);
  return endpoint;
}

}  // namespace

std::string RemoteEndpoint::base_url() const {
  bool ipv6 = host.find(':') != std::string::npos;
  return std::string(tls ? "https://" : "http://") + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + path;
}

std::string RemoteEndpoint::redacted() const {
  std::string credentials;
  if (!user.empty() || !password.empty()) credentials = user + (password.empty() ? "" : ":***") + "@";
  if (kind == Kind::file) return "file://" + path;
  if (kind == Kind::http) {
    std::string url = base_url();
    return url.insert(url.find("://") + 3, credentials);
  }
  if (unix_socket) return "redis+unix://" + credentials + socket_path + (db ? "?db=" + std::to_string(db) : "");
  bool ipv6 = host.find(':') != std::string::npos;
  return "redis://" + credentials + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) +
         (db ? "/" + std::to_string(db) : "");
}

std::span<const RemoteScheme> remote_schemes() {
  static constexpr std::string_view kRedisAdvice = "check the server, the password and JITCACHE_REMOTE_TIMEOUT_MS (docs/remote.md)";
  static constexpr std::string_view kHttpAdvice =
      "check the server, the credentials (URL or JITCACHE_REMOTE_BEARER_TOKEN), JITCACHE_REMOTE_CA_FILE and "
      "JITCACHE_REMOTE_TIMEOUT_MS (docs/remote.md)";
  static constexpr std::string_view kFileAdvice =
      "check that the directory exists, its owner, group and mode, and the mount (docs/remote.md, Shared directories)";
  using Kind = RemoteEndpoint::Kind;
  static constexpr RemoteScheme kSchemes[] = {
      {"redis", "redis://", Kind::redis, [](std::string_view rest, std::string* error) { return parse_tcp(rest, error); },
       kRedisAdvice},
      {"redis+unix", "redis+unix:", Kind::redis, parse_unix, kRedisAdvice},
      {"http", "http://", Kind::http,
       [](std::string_view rest, std::string* error) { return parse_http(rest, false, error); }, kHttpAdvice},
      {"https", "https://", Kind::http,
       [](std::string_view rest, std::string* error) { return parse_http(rest, true, error); }, kHttpAdvice},
      {"file", "file:", Kind::file, parse_file, kFileAdvice},
  };
  return kSchemes;
}

const RemoteScheme& remote_scheme(RemoteEndpoint::Kind kind) {
  for (const RemoteScheme& scheme : remote_schemes()) {
    if (scheme.kind == kind) return scheme;
  }
  return remote_schemes().front();
}

std::optional<RemoteEndpoint> parse_remote_url(std::string_view url, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  for (const RemoteScheme& scheme : remote_schemes()) {
    if (url.starts_with(scheme.prefix)) return scheme.parse(url.substr(scheme.prefix.size()), error);
  }
  std::size_t scheme = url.find("://");
  *error = scheme == std::string_view::npos ? "not a URL (expected redis://host:port, http(s)://host/path or file:///dir)"
                                            : "unsupported scheme '" + std::string(url.substr(0, scheme)) + "'";
  return std::nullopt;
}

std::optional<std::vector<RemoteEndpoint>> parse_remote_urls(std::string_view urls, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  std::vector<RemoteEndpoint> endpoints;
  constexpr std::string_view kSeparators = "| \t\n\r";
  for (std::size_t start = 0; start < urls.size();) {
    std::size_t end = std::min(urls.find_first_of(kSeparators, start), urls.size());
    if (end > start) {
      std::optional<RemoteEndpoint> endpoint = parse_remote_url(urls.substr(start, end - start), error);
      if (!endpoint) {
        if (endpoints.size() > 0 || end < urls.size()) *error = "remote " + std::to_string(endpoints.size() + 1) + ": " + *error;
        return std::nullopt;
      }
      endpoints.push_back(std::move(*endpoint));
    }
    start = end + 1;
  }
  if (endpoints.empty()) {
    *error = "no URL";
    return std::nullopt;
  }
  return endpoints;
}

}  // namespace jitcache

#include "store/remote/s3_scheme.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kS3Advice =
    "check the bucket, JITCACHE_REMOTE_S3_ENDPOINT (or AWS_ENDPOINT_URL), the region, the credentials "
    "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or ~/.aws/credentials), the clock and "
    "JITCACHE_REMOTE_TIMEOUT_MS (docs/remote.md, S3 remotes)";
constexpr std::string_view kS3Settings[] = {kS3EndpointSetting,        kS3RegionSetting,       kS3AddressingSetting,
                                          kS3AccessKeyIdSetting,     kS3SecretAccessKeySetting,
                                          kS3SessionTokenSetting,    kS3ProfileSetting};

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// S3's rule for new buckets (3 to 63 of a-z 0-9 . -, a letter or digit at each end): a name a
// server could take as a host name in virtual-host addressing.
bool valid_bucket(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_lower_alnum(c) || c == '.' || c == '-'; });
}

// The prefix is sent as written: unreserved characters and '/' only, so that no encoding or path
// normalization (curl squashes "/../") can make two spellings of one key.
bool valid_prefix(std::string_view prefix) {
  for (char c : prefix) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '~' && c != '/') {
      return false;
    }
  }
  for (std::size_t start = 0; start <= prefix.size();) {
    std::size_t end = std::min(prefix.find('/', start), prefix.size());
    std::string_view step = prefix.substr(start, end - start);
    if (step.empty() || step == "." || step == "..") return false;
    start = end + 1;
  }
  return true;
}

std::unique_ptr<RemoteEndpoint> parse_s3(std::string_view rest, std::string* error) {
  std::size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  std::string_view prefix = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (bucket.find('@') != std::string_view::npos || bucket.find(':') != std::string_view::npos) {
    *error = "an s3 URL names the bucket only: credentials, host and port are settings (docs/remote.md, S3 remotes)";
    return nullptr;
  }
  if (!valid_bucket(bucket)) {
    *error = "'" + std::string(bucket) + "' is no S3 bucket name (3 to 63 of a-z, 0-9, '.', '-'): s3://bucket[/prefix]";
    return nullptr;
  }
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  if (!prefix.empty() && !valid_prefix(prefix)) {
    *error = "an s3 prefix is letters, digits, '-', '_', '.', '~' and '/' between non-empty steps other than '.' "
             "and '..'";
    return nullptr;
  }
  auto endpoint = std::make_unique<S3Endpoint>();
  endpoint->bucket = std::string(bucket);
  endpoint->prefix = std::string(prefix);
  return endpoint;
}

bool is_ip_literal(std::string_view host) {
  return host.find(':') != std::string_view::npos ||
         std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

std::string S3Endpoint::redacted() const { return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix); }

std::optional<S3Location> S3Endpoint::locate(const RemoteConfig& config, std::string* error) const {
  S3Location location;
  // remote_s3_region reads JITCACHE_REMOTE_S3_REGION, then AWS_REGION; the AWS tools' older name next.
  location.region = config.scheme_setting(kS3RegionSetting);
  if (location.region.empty()) location.region = environment("AWS_DEFAULT_REGION");
  if (location.region.empty()) location.region = "us-east-1";
  if (location.region.size() > 64 ||
      !std::all_of(location.region.begin(), location.region.end(), [](char c) { return is_lower_alnum(c) || c == '-'; })) {
    *error = "remote_s3_region '" + location.region + "' is not a region name (a-z, 0-9, '-')";
    return std::nullopt;
  }
  std::string given = config.scheme_setting(kS3EndpointSetting);
  const bool custom = !given.empty();
  if (!custom) given = "https://s3." + location.region + ".amazonaws.com";
  std::string_view rest = given;
  const bool tls = rest.starts_with("https://");
  if (!tls && !rest.starts_with("http://")) {
    *error = "remote_s3_endpoint '" + given + "' is not an http:// or https:// URL";
    return std::nullopt;
  }
  rest.remove_prefix(tls ? 8 : 7);
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = rest.substr(authority.size());
  while (path.ends_with('/')) path.remove_suffix(1);
  if (authority.find('@') != std::string_view::npos || path.find_first_of("?# ") != std::string_view::npos) {
    *error = "remote_s3_endpoint is scheme://host[:port][/path], without credentials, query or fragment";
    return std::nullopt;
  }
  std::string why;
  std::optional<HostPort> address = parse_host_port(authority, tls ? 443 : 80, &why);
  if (!address) {
    *error = "remote_s3_endpoint: " + why;
    return std::nullopt;
  }
  const std::string scheme = tls ? "https://" : "http://";
  location.endpoint = scheme + address->text() + std::string(path);

  const std::string& addressing = config.scheme_setting(kS3AddressingSetting);
  if (addressing.empty() || addressing == "auto") {
    // A custom server (MinIO, Garage, Ceph) rarely has a name per bucket; a dotted bucket name
    // would not match AWS's wildcard certificate.
    location.path_style = custom || bucket.find('.') != std::string::npos;
  } else if (addressing == "path" || addressing == "virtual") {
    location.path_style = addressing == "path";
  } else {
    *error = "remote_s3_addressing is auto, path or virtual, not '" + addressing + "'";
    return std::nullopt;
  }
  if (location.path_style) {
    location.bucket_url = location.endpoint + "/" + bucket;
  } else if (is_ip_literal(address->host)) {
    *error = "virtual-host addressing needs a host name, not the address " + address->host +
             " (remote_s3_addressing=path)";
    return std::nullopt;
  } else {
    HostPort bucket_host{bucket + "." + address->host, address->port};
    location.bucket_url = scheme + bucket_host.text() + std::string(path);
  }
  return location;
}

const RemoteScheme kS3Scheme{"s3", "s3://", "s3://jit-cache/team-a", parse_s3, kS3Settings, kS3Advice};

}  // namespace jitcache

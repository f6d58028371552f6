// The s3:// scheme (the client: store/remote/s3_remote.hpp):
//   s3://bucket[/prefix]   objects below <prefix>/ in the bucket of an S3-compatible server
// Where that server is (endpoint, region, path-style or virtual-host addressing) and the
// credentials are settings of the scheme's own (docs/remote.md, "S3 remotes"): a URL names the
// bucket, never a secret.
#pragma once

#include <optional>
#include <string>

#include "store/remote/url_parts.hpp"
#include "store/remote_api/remote_url.hpp"

namespace jitcache {

// Rows of core/settings.cpp, each with an AWS variable read under the JITCACHE_ one.
inline constexpr std::string_view kS3EndpointSetting = "remote_s3_endpoint";      // AWS_ENDPOINT_URL
inline constexpr std::string_view kS3RegionSetting = "remote_s3_region";          // AWS_REGION
inline constexpr std::string_view kS3AddressingSetting = "remote_s3_addressing";  // auto, path, virtual
inline constexpr std::string_view kS3AccessKeyIdSetting = "remote_s3_access_key_id";          // AWS_ACCESS_KEY_ID
inline constexpr std::string_view kS3SecretAccessKeySetting = "remote_s3_secret_access_key";  // Secret
inline constexpr std::string_view kS3SessionTokenSetting = "remote_s3_session_token";         // Secret
inline constexpr std::string_view kS3ProfileSetting = "remote_s3_profile";                    // AWS_PROFILE

// Where the requests go, from the settings: what S3Remote signs and sends.
struct S3Location {
  std::string region;      // signs every request ("aws:amz:<region>:s3")
  std::string bucket_url;  // scheme://host:port[/path]/bucket (path-style) or scheme://bucket.host:port[/path]
  bool path_style = true;
  std::string endpoint;    // the server as shown by doctor (scheme://host:port[/path])
};

struct S3Endpoint final : RemoteEndpoint {
  std::string bucket;
  std::string prefix;  // the key prefix without leading or trailing '/', "" for the bucket's root

  std::string redacted() const override;  // s3://bucket/prefix (it holds no secret)
  // The server is believed through remote_ca_file like an HTTPS one (an https endpoint).
  bool trusts_ca_file() const override { return true; }
  std::unique_ptr<RemoteClient> open(RemoteConfig config) const override;  // in the client's .cpp

  // The endpoint, region and addressing of `config`'s settings; nullopt and a one-line reason
  // when a setting is malformed.
  std::optional<S3Location> locate(const RemoteConfig& config, std::string* error) const;
};

extern const RemoteScheme kS3Scheme;

}  // namespace jitcache

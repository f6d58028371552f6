// Where an S3 remote's credentials come from (docs/remote.md, "S3 remotes"): the settings
// (remote_s3_access_key_id / remote_s3_secret_access_key / remote_s3_session_token, which read
// JITCACHE_REMOTE_S3_* and then AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN),
// else the AWS shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials),
// profile remote_s3_profile (JITCACHE_REMOTE_S3_PROFILE, AWS_PROFILE, "default"). That file is
// read as hostile input: a regular file of at most 64 KiB, every line bounded, any problem a
// one-line reason naming the file (never a value from it).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: none
  std::string source;         // where they came from, for doctor: "settings", "<file> [profile]"
};

inline constexpr std::size_t kMaxS3CredentialsFileBytes = 64u << 10;

// The credentials `config` points at; nullopt and a one-line reason when there are none or the
// file is refused.
std::optional<S3Credentials> s3_credentials(const RemoteConfig& config, std::string* error);

// One profile of a credentials file's text (INI: [profile] sections, key = value lines, '#' and
// ';' comments).
std::optional<S3Credentials> parse_s3_credentials_file(std::string_view text, std::string_view profile,
                                                       std::string* error);

}  // namespace jitcache

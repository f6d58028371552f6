#include "store/remote/s3_credentials.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "store/remote/s3_scheme.hpp"

namespace jitcache {
namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// A value that could travel in a header: printable ASCII, no blank inside.
bool header_safe(std::string_view value) {
  for (char c : value) {
    if (c <= ' ' || c > '~') return false;
  }
  return !value.empty();
}

// At most the cap (+1 to see a larger file), from a regular file opened without following a
// FIFO's wait or a device's read.
std::optional<std::string> read_bounded(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = "cannot open the credentials file " + path;
    return std::nullopt;
  }
  struct stat info {};
  std::string text;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    *error = "the credentials file " + path + " is not a regular file";
  } else {
    char buffer[8192];
    for (;;) {
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got < 0) {
        *error = "cannot read the credentials file " + path;
        break;
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() > kMaxS3CredentialsFileBytes) {
        *error = "the credentials file " + path + " is larger than " + std::to_string(kMaxS3CredentialsFileBytes) +
                 " bytes";
        break;
      }
    }
  }
  ::close(fd);
  if (!error->empty()) return std::nullopt;
  return text;
}

}  // namespace

std::optional<S3Credentials> parse_s3_credentials_file(std::string_view text, std::string_view profile,
                                                       std::string* error) {
  if (text.find('\0') != std::string_view::npos) {
    *error = "it is not a text file";
    return std::nullopt;
  }
  S3Credentials found;
  bool in_profile = false;
  bool seen_profile = false;
  std::size_t number = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    const std::string_view line = trimmed(raw);
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    // An indented line continues a nested value (the config file's "s3 =" blocks): no credential.
    if (raw.front() == ' ' || raw.front() == '\t') continue;
    if (line.front() == '[') {
      if (line.back() != ']') {
        *error = "line " + std::to_string(number) + ": a section header without ']'";
        return std::nullopt;
      }
      in_profile = trimmed(line.substr(1, line.size() - 2)) == profile;
      seen_profile = seen_profile || in_profile;
      continue;
    }
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) {
      *error = "line " + std::to_string(number) + ": neither a [section] nor key = value";
      return std::nullopt;
    }
    if (!in_profile) continue;
    const std::string_view key = trimmed(line.substr(0, equals));
    const std::string_view value = trimmed(line.substr(equals + 1));
    std::string* field = key == "aws_access_key_id"       ? &found.access_key_id
                         : key == "aws_secret_access_key" ? &found.secret_access_key
                         : key == "aws_session_token"     ? &found.session_token
                                                          : nullptr;
    if (!field) continue;
    if (!header_safe(value)) {
      *error = "line " + std::to_string(number) + ": " + std::string(key) + " is empty or not printable ASCII";
      return std::nullopt;
    }
    *field = std::string(value);
  }
  if (!seen_profile) {
    *error = "no [" + std::string(profile) + "] profile";
    return std::nullopt;
  }
  if (found.access_key_id.empty() || found.secret_access_key.empty()) {
    *error = "profile [" + std::string(profile) + "] lacks aws_access_key_id or aws_secret_access_key";
    return std::nullopt;
  }
  return found;
}

std::optional<S3Credentials> s3_credentials(const RemoteConfig& config, std::string* error) {
  S3Credentials given{config.scheme_setting(kS3AccessKeyIdSetting), config.scheme_setting(kS3SecretAccessKeySetting),
                      config.scheme_setting(kS3SessionTokenSetting), "settings"};
  if (!given.access_key_id.empty() || !given.secret_access_key.empty()) {
    // One without the other is a mistake to name, not a reason to look elsewhere.
    if (given.access_key_id.empty() || given.secret_access_key.empty()) {
      *error = std::string(given.access_key_id.empty() ? "an S3 secret access key without its access key id"
                                                       : "an S3 access key id without its secret access key") +
               " (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the JITCACHE_REMOTE_S3_ ones, go together)";
      return std::nullopt;
    }
    if (!header_safe(given.access_key_id) || !header_safe(given.secret_access_key) ||
        (!given.session_token.empty() && !header_safe(given.session_token))) {
      *error = "the S3 credentials in the settings are not printable ASCII without blanks";
      return std::nullopt;
    }
    return given;
  }
  std::string path;
  if (const char* file = std::getenv("AWS_SHARED_CREDENTIALS_FILE"); file && *file) {
    path = file;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.aws/credentials";
  } else {
    *error = "no S3 credentials: neither AWS_ACCESS_KEY_ID nor a credentials file (HOME is unset)";
    return std::nullopt;
  }
  std::string profile = config.scheme_setting(kS3ProfileSetting);
  if (profile.empty()) profile = "default";
  std::string why;
  std::optional<std::string> text = read_bounded(path, &why);
  if (!text) {
    *error = "no S3 credentials: AWS_ACCESS_KEY_ID is unset and " + why;
    return std::nullopt;
  }
  std::optional<S3Credentials> found = parse_s3_credentials_file(*text, profile, &why);
  if (!found) {
    *error = "the credentials file " + path + ": " + why;
    return std::nullopt;
  }
  found->source = path + " [" + profile + "]";
  return found;
}

}  // namespace jitcache

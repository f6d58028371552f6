#include "s3_server.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "redis_server.hpp"  // free_loopback_port
#include "store/remote/s3_scheme.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return false;
}

}  // namespace

std::string S3Server::program(std::string* why) {
  fs::path program;
  if (const char* given = std::getenv("JITCACHE_TEST_S3RVER"); given && *given) {
    program = given;
  } else {
    const char* cache = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path root = cache && *cache ? fs::path(cache) : fs::path(home ? home : "/nonexistent") / ".cache";
    program = root / "jitcache-tests" / "s3rver" / "node_modules" / ".bin" / "s3rver";
  }
  if (::access(program.c_str(), X_OK) != 0) {
    *why = "no s3rver at " + program.string() + " (scripts/install-deps.sh --tests installs it with npm)";
    return {};
  }
  if (!on_path("node")) {
    *why = "s3rver needs node (Debian: nodejs), which is not on PATH";
    return {};
  }
  return program.string();
}

S3Server::S3Server() {
  std::string why;
  const std::string s3rver = program(&why);
  if (s3rver.empty()) throw std::runtime_error(why);
  fs::create_directories(data());
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (start_on(s3rver, free_loopback_port())) return;
  }
  throw std::runtime_error("s3rver did not start; see " + (dir_ / "s3rver.log").string());
}

bool S3Server::start_on(const std::string& s3rver, int port) {
  std::vector<std::string> args = {s3rver, "-d", data().string(), "-a", "127.0.0.1", "-p", std::to_string(port),
                                   "--configure-bucket", kBucket};
  const std::string log = (dir_ / "s3rver.log").string();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a signal to it reaches node only, not the test
    if (FILE* out = std::freopen(log.c_str(), "a", stdout)) ::dup2(::fileno(out), 2);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;
  port_ = port;
  // Ready when a signed request for an object of the bucket gets its answer (404: the bucket is
  // there, the object is not).
  bool exited = false;
  std::string refused;
  bool ready = wait_until([&] {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return exited = true;  // port taken?
    RemoteConfig config;
    config.endpoint = parse_remote_url(remote_schemes(), url("ready"), &refused);
    configure(config);
    config.connect_timeout = std::chrono::milliseconds(1000);
    config.command_timeout = std::chrono::milliseconds(2000);
    return open_remote(config)->load(Digest128{0, 0}).status == RemoteStatus::miss;
  }, std::chrono::seconds(60));
  if (exited) pid_ = -1;
  if (ready && !exited) return true;
  kill();
  return false;
}

S3Server::~S3Server() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
  kill();
}

std::string S3Server::url(const std::string& prefix) const {
  return std::string("s3://") + kBucket + (prefix.empty() ? "" : "/" + prefix);
}
std::string S3Server::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

void S3Server::configure(RemoteConfig& config, const std::string& access_key_id) const {
  config.scheme_settings[std::string(kS3EndpointSetting)] = endpoint();
  config.scheme_settings[std::string(kS3AccessKeyIdSetting)] = access_key_id;
  config.scheme_settings[std::string(kS3SecretAccessKeySetting)] = kSecretAccessKey;
}

std::map<std::string, std::string> S3Server::environment() const {
  return {{"JITCACHE_REMOTE_S3_ENDPOINT", endpoint()},
          {"JITCACHE_REMOTE_S3_ACCESS_KEY_ID", kAccessKeyId},
          {"JITCACHE_REMOTE_S3_SECRET_ACCESS_KEY", kSecretAccessKey}};
}

void S3Server::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void S3Server::pause() { ::kill(pid_, SIGSTOP); }
void S3Server::resume() { ::kill(pid_, SIGCONT); }

}  // namespace jitcache::testing

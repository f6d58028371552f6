// A real S3 server for one test: s3rver (npm, 3.7.1) on 127.0.0.1, a free port, its objects in the
// test's temp dir, one bucket made at start. scripts/install-deps.sh --tests installs it into
// ${XDG_CACHE_HOME:-~/.cache}/jitcache-tests/s3rver (JITCACHE_TEST_S3RVER names another s3rver);
// where it is not installed the tests skip, naming why.
//
// What s3rver does not do, so no test may lean on it: it checks the access key id only (a wrong
// secret and unsigned requests pass), and ignores If-None-Match. A wrong access key id is refused
// (403 InvalidAccessKeyId); a missing object is 404; it answers ListObjectsV2.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "store/remote_api/remote_client.hpp"
#include "test_support.hpp"

namespace jitcache::testing {

class S3Server {
 public:
  static constexpr const char* kAccessKeyId = "S3RVER";  // s3rver's one account
  static constexpr const char* kSecretAccessKey = "S3RVER";
  static constexpr const char* kBucket = "jit-cache";

  // The s3rver program to run, or "" and why there is none (GTEST_SKIP with it).
  static std::string program(std::string* why);

  S3Server();  // throws when it does not start
  ~S3Server();
  S3Server(const S3Server&) = delete;
  S3Server& operator=(const S3Server&) = delete;

  std::string url(const std::string& prefix = "team") const;  // s3://jit-cache/<prefix>
  std::string endpoint() const;                                // http://127.0.0.1:<port>
  // The remote_s3_* settings of a client of this server, signing as `access_key_id`.
  void configure(RemoteConfig& config, const std::string& access_key_id = kAccessKeyId) const;
  // The same as JITCACHE_REMOTE_S3_* variables, for an app or the tool.
  std::map<std::string, std::string> environment() const;
  // Where s3rver keeps the bucket's objects (its own layout).
  std::filesystem::path data() const { return dir_ / "data"; }

  void kill();    // SIGKILL, then reap
  void pause();   // SIGSTOP: connections are accepted by the kernel but nothing answers
  void resume();  // SIGCONT

 private:
  bool start_on(const std::string& program, int port);

  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// Skips the test where no s3rver is installed.
#define JITCACHE_SKIP_WITHOUT_S3RVER()                                                       \
  do {                                                                                       \
    std::string s3rver_missing;                                                              \
    if (::jitcache::testing::S3Server::program(&s3rver_missing).empty()) GTEST_SKIP() << s3rver_missing; \
  } while (0)

}  // namespace jitcache::testing

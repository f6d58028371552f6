// A real nginx for one test, serving a WebDAV folder (GET, HEAD, PUT; JSON folder listings) on
// 127.0.0.1, a free port, with its config, logs and files in its own temp dir: nothing of the
// system's nginx setup is read or touched. Optionally HTTPS with a self-signed certificate made by
// `openssl req` for this server, basic or bearer auth, or a read-only folder (PUT refused).
// One process (master_process off), so kill()/pause()/resume() act on the whole server.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace jitcache::testing {

class NginxServer {
 public:
  struct Options {
    bool tls = false;
    std::string user, password;  // basic auth required when set
    std::string bearer_token;    // "Authorization: Bearer <token>" required when set
    bool read_only = false;      // PUT answered 403

    static Options https() { Options o; o.tls = true; return o; }
    static Options basic_auth(std::string user, std::string password) {
      Options o;
      o.user = std::move(user);
      o.password = std::move(password);
      return o;
    }
    static Options bearer(std::string token) { Options o; o.bearer_token = std::move(token); return o; }
    static Options refusing_writes() { Options o; o.read_only = true; return o; }
  };
  explicit NginxServer(Options options);
  NginxServer() : NginxServer(Options{}) {}
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  // http(s)://[user:password@]127.0.0.1:<port>/cache (the credentials of Options, if any).
  std::string url() const;
  std::string url_with_credentials(const std::string& user, const std::string& password) const;
  // The certificate to trust (JITCACHE_REMOTE_CA_FILE) when tls.
  std::filesystem::path ca_file() const { return dir_ / "cert.pem"; }
  // The folder served as /cache: the remote's files, to read and tamper with.
  std::filesystem::path root() const { return dir_ / "www" / "cache"; }
  // The regular files below root(), as paths relative to it, sorted.
  std::vector<std::string> files() const;

  void kill();    // SIGKILL, then reap: the port refuses connections from now on
  void pause();   // SIGSTOP: connections are accepted by the kernel but nothing answers
  void resume();  // SIGCONT

 private:
  bool start_on(int port);

  Options options_;
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace jitcache::testing

#include "nginx_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "redis_server.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

bool accepts_connections(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  bool connected = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  if (fd >= 0) ::close(fd);
  return connected;
}

// `argv[0]` is a path: run() does not search PATH.
std::string run_checked(const std::vector<std::string>& argv) {
  RunResult result = run(argv);
  if (result.exit_code != 0) throw std::runtime_error(argv.front() + " failed: " + result.err);
  return result.out;
}

}  // namespace

NginxServer::NginxServer(Options options) : options_(std::move(options)) {
  fs::create_directories(root());
  if (options_.tls) {  // a certificate for 127.0.0.1 only, valid for a day, made for this server
    run_checked({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", (dir_ / "key.pem").string(), "-out", ca_file().string(), "-days", "1", "-subj",
                 "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"});
  }
  if (!options_.user.empty()) {
    std::string hash = run_checked({"/usr/bin/openssl", "passwd", "-apr1", options_.password});
    write_text(dir_ / "htpasswd", options_.user + ":" + hash);  // hash ends with its newline
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (start_on(free_loopback_port())) return;
  }
  throw std::runtime_error("nginx did not start; see " + (dir_ / "error.log").string());
}

NginxServer::~NginxServer() { kill(); }

bool NginxServer::start_on(int port) {
  const std::string d = dir_.path().string();
  std::string location = "    location /cache/ {\n      root " + d + "/www;\n" +
                         "      dav_methods PUT;\n      create_full_put_path on;\n      dav_access user:rw;\n" +
                         "      autoindex on;\n      autoindex_format json;\n";
  if (options_.read_only) location += "      limit_except GET HEAD { deny all; }\n";
  if (!options_.user.empty()) location += "      auth_basic jitcache;\n      auth_basic_user_file " + d + "/htpasswd;\n";
  if (!options_.bearer_token.empty()) {
    location += "      if ($http_authorization != \"Bearer " + options_.bearer_token + "\") { return 401; }\n";
  }
  location += "    }\n";
  std::string config = std::string("daemon off;\nmaster_process off;\nworker_processes 1;\n") +
                       (::geteuid() == 0 ? "user root;\n" : "") + "pid " + d + "/nginx.pid;\nerror_log " + d +
                       "/error.log;\nevents { worker_connections 64; }\nhttp {\n  access_log off;\n" +
                       "  client_max_body_size 0;\n  client_body_temp_path " + d + "/body;\n  proxy_temp_path " + d +
                       "/proxy;\n  fastcgi_temp_path " + d + "/fastcgi;\n  uwsgi_temp_path " + d + "/uwsgi;\n" +
                       "  scgi_temp_path " + d + "/scgi;\n  server {\n    listen 127.0.0.1:" + std::to_string(port) +
                       (options_.tls ? " ssl" : "") + ";\n";
  if (options_.tls) config += "    ssl_certificate " + ca_file().string() + ";\n    ssl_certificate_key " + d + "/key.pem;\n";
  config += location + "  }\n}\n";
  write_text(dir_ / "nginx.conf", config);

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::execlp("nginx", "nginx", "-p", d.c_str(), "-e", (d + "/error.log").c_str(), "-c", (d + "/nginx.conf").c_str(),
             static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = pid;
  port_ = port;
  bool exited = false;
  wait_until([&] {
    exited = ::waitpid(pid_, nullptr, WNOHANG) == pid_;  // port taken, or a bad config
    return exited || accepts_connections(port_);
  }, std::chrono::seconds(10));
  if (!exited && accepts_connections(port_)) return true;
  if (exited) pid_ = -1;
  kill();
  return false;
}

std::string NginxServer::url() const { return url_with_credentials(options_.user, options_.password); }

std::string NginxServer::url_with_credentials(const std::string& user, const std::string& password) const {
  std::string credentials = user.empty() ? "" : user + ":" + password + "@";
  return std::string(options_.tls ? "https://" : "http://") + credentials + "127.0.0.1:" + std::to_string(port_) + "/cache";
}

std::vector<std::string> NginxServer::files() const {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root(), error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (it->is_regular_file()) found.push_back(fs::relative(it->path(), root()).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void NginxServer::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void NginxServer::pause() { ::kill(pid_, SIGSTOP); }
void NginxServer::resume() { ::kill(pid_, SIGCONT); }

}  // namespace jitcache::testing

// What only the S3 remote has (docs/remote.md, "S3 remotes"): its URL and settings (no server),
// the AWS credentials file read as hostile input, every request's SigV4 signature checked here
// (s3rver checks none) on a recording server, and against a real s3rver started by the test
// (skipped where none is installed: s3_server.hpp): a wrong access key id turns the remote off,
// credentials from a credentials file, warm's listing (ListObjectsV2) and input records, doctor's
// findings, and secrets in no reason, description or tool output. s3rver checks no signature (see
// s3_server.hpp): a wrong secret is not tested against it. The cases every backend shares are
// remote_backends_test.cpp ("s3"); hostile fake servers are remote_bounds_test.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "hashing/recorded_inputs.hpp"
#include "remote_clients.hpp"
#include "s3_server.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/s3_credentials.hpp"
#include "store/remote/s3_remote.hpp"
#include "store/remote_api/program_summary.hpp"
#include "test_support.hpp"

namespace jitcache::testing {
namespace {

namespace fs = std::filesystem;

const Digest128 kKey{1, 2};
constexpr const char* kSecret = "s3rver-never-checks-this-secret";

std::string refusal(const std::string& url) {
  std::string error;
  EXPECT_EQ(parse_remote_url(remote_schemes(), url, &error), nullptr) << url;
  return error;
}

RemoteConfig settings_of(const std::string& url, std::map<std::string, std::string, std::less<>> settings) {
  RemoteConfig config;
  config.endpoint = endpoint_of(url);
  config.scheme_settings = std::move(settings);
  config.command_timeout = std::chrono::milliseconds(10000);  // generous: the CI machine is busy
  config.connect_timeout = std::chrono::milliseconds(5000);
  config.backoff = std::chrono::hours(1);
  return config;
}

std::optional<S3Location> located(const std::string& url, std::map<std::string, std::string, std::less<>> settings,
                                  std::string* error) {
  RemoteConfig config = settings_of(url, std::move(settings));
  return dynamic_cast<const S3Endpoint&>(*config.endpoint).locate(config, error);
}

// The environment variables the AWS tools read, removed for one test (and put back).
class AwsEnvironment {
 public:
  AwsEnvironment() {
    for (const char* name : kNames) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
  }
  ~AwsEnvironment() {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  static constexpr const char* kNames[] = {"AWS_DEFAULT_REGION", "AWS_SHARED_CREDENTIALS_FILE", "HOME"};
  std::map<std::string, std::string> saved_;
};

TEST(RemoteS3Url, ABucketAndAPrefixParseAndAnythingElseIsRefusedWithTheReason) {
  std::string error;
  auto endpoint = parse_remote_url(remote_schemes(), "s3://jit-cache/team/a/", &error);
  ASSERT_NE(endpoint, nullptr) << error;
  const auto& s3 = dynamic_cast<const S3Endpoint&>(*endpoint);
  EXPECT_EQ(s3.bucket, "jit-cache");
  EXPECT_EQ(s3.prefix, "team/a");
  EXPECT_EQ(endpoint->redacted(), "s3://jit-cache/team/a");
  EXPECT_EQ(endpoint_of("s3://jit-cache")->redacted(), "s3://jit-cache");
  EXPECT_NE(refusal("s3://Jit_Cache").find("no S3 bucket name"), std::string::npos);
  EXPECT_NE(refusal("s3://ab").find("no S3 bucket name"), std::string::npos);
  EXPECT_NE(refusal("s3://-cache").find("no S3 bucket name"), std::string::npos);
  EXPECT_NE(refusal("s3://AKIA:secret@jit-cache").find("credentials, host and port are settings"), std::string::npos);
  EXPECT_EQ(refusal("s3://AKIA:hidden@jit-cache").find("hidden"), std::string::npos);
  EXPECT_NE(refusal("s3://jit-cache/a/../b").find("s3 prefix"), std::string::npos);
  EXPECT_NE(refusal("s3://jit-cache/a//b").find("s3 prefix"), std::string::npos);
  EXPECT_NE(refusal("s3://jit-cache/a?b").find("s3 prefix"), std::string::npos);
  EXPECT_NE(refusal("s3://jit-cache/a%2Fb").find("s3 prefix"), std::string::npos);
}

TEST(RemoteS3Url, TheEndpointRegionAndAddressingComeFromTheSettings) {
  AwsEnvironment clean;
  std::string error;
  // AWS: virtual-host addressing in the region's endpoint; the AWS tools' older region variable next.
  std::optional<S3Location> aws = located("s3://jit-cache/team", {{"remote_s3_region", "eu-west-3"}}, &error);
  ASSERT_TRUE(aws) << error;
  EXPECT_EQ(aws->bucket_url, "https://jit-cache.s3.eu-west-3.amazonaws.com:443");
  EXPECT_FALSE(aws->path_style);
  ::setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
  EXPECT_EQ(located("s3://jit-cache", {}, &error)->region, "ap-south-1");
  ::unsetenv("AWS_DEFAULT_REGION");
  EXPECT_EQ(located("s3://jit-cache", {}, &error)->region, "us-east-1");
  // A dotted bucket would not match AWS's wildcard certificate: path-style.
  EXPECT_EQ(located("s3://jit.cache", {}, &error)->bucket_url, "https://s3.us-east-1.amazonaws.com:443/jit.cache");
  // A server of one's own: path-style unless told otherwise.
  std::optional<S3Location> minio =
      located("s3://jit-cache/team", {{"remote_s3_endpoint", "http://minio.lan:9000/"}}, &error);
  ASSERT_TRUE(minio) << error;
  EXPECT_EQ(minio->bucket_url, "http://minio.lan:9000/jit-cache");
  EXPECT_EQ(located("s3://jit-cache",
                    {{"remote_s3_endpoint", "https://garage.lan"}, {"remote_s3_addressing", "virtual"}}, &error)
                ->bucket_url,
            "https://jit-cache.garage.lan:443");
  // Malformed settings: a reason naming the setting, no client request sent.
  EXPECT_FALSE(located("s3://jit-cache", {{"remote_s3_endpoint", "minio.lan:9000"}}, &error));
  EXPECT_NE(error.find("remote_s3_endpoint"), std::string::npos) << error;
  EXPECT_FALSE(located("s3://jit-cache", {{"remote_s3_endpoint", "http://k:s@minio.lan"}}, &error));
  EXPECT_NE(error.find("without credentials"), std::string::npos) << error;
  EXPECT_FALSE(located("s3://jit-cache", {{"remote_s3_addressing", "sideways"}}, &error));
  EXPECT_NE(error.find("remote_s3_addressing"), std::string::npos) << error;
  EXPECT_FALSE(located("s3://jit-cache", {{"remote_s3_region", "eu:west"}}, &error));
  EXPECT_NE(error.find("remote_s3_region"), std::string::npos) << error;
  EXPECT_FALSE(located("s3://jit-cache",
                       {{"remote_s3_endpoint", "http://127.0.0.1:9000"}, {"remote_s3_addressing", "virtual"}}, &error));
  EXPECT_NE(error.find("host name"), std::string::npos) << error;
}

TEST(RemoteS3Credentials, TheSettingsComeFirstThenTheProfileOfTheCredentialsFile) {
  AwsEnvironment clean;
  TempDir tmp;
  const fs::path file = tmp / "credentials";
  write_text(file, "# shared\n[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n"
                   "\n[ci]\r\naws_access_key_id=AKIACI\r\naws_secret_access_key=ci-secret\r\n"
                   "aws_session_token = ci-token\r\n  nested = ignored\r\n");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", file.c_str(), 1);
  std::string error;
  auto from_file = s3_credentials(settings_of("s3://jit-cache", {}), &error);
  ASSERT_TRUE(from_file) << error;
  EXPECT_EQ(from_file->access_key_id, "AKIADEFAULT");
  EXPECT_EQ(from_file->secret_access_key, "default-secret");
  EXPECT_EQ(from_file->source, file.string() + " [default]");
  auto ci = s3_credentials(settings_of("s3://jit-cache", {{"remote_s3_profile", "ci"}}), &error);
  ASSERT_TRUE(ci) << error;
  EXPECT_EQ(ci->access_key_id, "AKIACI");
  EXPECT_EQ(ci->session_token, "ci-token");
  auto given = s3_credentials(
      settings_of("s3://jit-cache", {{"remote_s3_access_key_id", "AKIAENV"}, {"remote_s3_secret_access_key", "s"}}),
      &error);
  ASSERT_TRUE(given) << error;
  EXPECT_EQ(given->access_key_id, "AKIAENV");
  EXPECT_EQ(given->source, "settings");
  // One of the pair without the other is named, not made up from the file.
  EXPECT_FALSE(s3_credentials(settings_of("s3://jit-cache", {{"remote_s3_access_key_id", "AKIAENV"}}), &error));
  EXPECT_NE(error.find("without its secret access key"), std::string::npos) << error;
  EXPECT_FALSE(s3_credentials(settings_of("s3://jit-cache", {{"remote_s3_profile", "nobody"}}), &error));
  EXPECT_NE(error.find("no [nobody] profile"), std::string::npos) << error;
}

// Whatever the file holds, a one-line reason naming it, never a value from it, and no hang.
TEST(RemoteS3Credentials, AHostileCredentialsFileIsRefusedWithAReasonAndNoValueOfIt) {
  AwsEnvironment clean;
  TempDir tmp;
  const fs::path file = tmp / "credentials";
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", file.c_str(), 1);
  auto refused = [&](const std::string& expected) {
    std::string error;
    EXPECT_FALSE(s3_credentials(settings_of("s3://jit-cache", {}), &error)) << expected;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_EQ(error.find("leaked-secret"), std::string::npos) << error;
    return error;
  };
  refused("cannot open the credentials file " + file.string());  // missing
  write_text(file, std::string("[default]\naws_access_key_id = AKIA\naws_secret_access_key = leaked-secret\0x", 74));
  refused("not a text file");
  write_text(file, "[default]\naws_access_key_id = AKIA\naws_secret_access_key = leaked-secret " + std::string(70000, 'x'));
  refused("larger than 65536 bytes");
  write_text(file, "[default\naws_access_key_id = leaked-secret\n");
  refused("line 1");
  write_text(file, "[default]\naws_access_key_id = AKIA\nleaked-secret\n");
  refused("line 3");
  write_text(file, "[default]\naws_access_key_id = AKIA\naws_secret_access_key = leaked-secret\x01\n");
  refused("not printable ASCII");
  write_text(file, "[default]\naws_access_key_id = AKIA\n");
  refused("lacks aws_access_key_id or aws_secret_access_key");
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);  // a FIFO nobody writes: refused, not waited on
  refused("not a regular file");
  fs::remove(file);
  fs::create_directory(file);
  refused("not a regular file");
}

// A loopback HTTP server that records each request (head and body) and answers it with `answer`,
// one connection per request ("Connection: close"): what the client sends, seen byte for byte.
class RecordingServer {
 public:
  struct Request {
    std::string method, target, body;
    std::map<std::string, std::string> headers;  // names in lower case
  };
  explicit RecordingServer(std::function<std::string(const Request&)> answer) : answer_(std::move(answer)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(listener_, 8) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0 || ::pipe(stop_) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~RecordingServer() {
    (void)!::write(stop_[1], "x", 1);
    thread_.join();
    ::close(listener_);
    ::close(stop_[0]);
    ::close(stop_[1]);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    for (;;) {
      pollfd waits[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(waits, 2, -1) <= 0 || waits[1].revents) return;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      std::string data;
      char buffer[65536];
      std::size_t head_end = std::string::npos;
      std::size_t wanted = 0;
      while (head_end == std::string::npos || data.size() < head_end + 4 + wanted) {
        const ssize_t got = ::recv(client, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        data.append(buffer, static_cast<std::size_t>(got));
        if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
          const Request head = parse(data.substr(0, head_end));
          if (auto length = head.headers.find("content-length"); length != head.headers.end()) {
            wanted = std::stoul(length->second);
          }
        }
      }
      if (head_end != std::string::npos) {
        Request request = parse(data.substr(0, head_end));
        request.body = data.substr(head_end + 4);
        const std::string reply = answer_(request);
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(std::move(request));
        }
        (void)!::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      }
      ::close(client);
    }
  }
  static Request parse(const std::string& head) {
    Request request;
    std::size_t line_end = head.find("\r\n");
    const std::string first = head.substr(0, line_end);
    request.method = first.substr(0, first.find(' '));
    request.target = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
    while (line_end != std::string::npos && line_end < head.size()) {
      const std::size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      request.headers[name] = value;
    }
    return request;
  }

  std::function<std::string(const Request&)> answer_;
  int listener_ = -1;
  int stop_[2] = {-1, -1};
  int port_ = 0;
  std::mutex mutex_;
  std::vector<Request> requests_;
  std::thread thread_;
};

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  return hex(std::string_view(reinterpret_cast<const char*>(digest), size));
}

// AWS Signature V4 recomputed from the request as received (AWS's documented algorithm, written
// here independently of libcurl): "" when it verifies, else what is wrong.
std::string sigv4_problem(const RecordingServer::Request& request, const std::string& secret, const std::string& region) {
  const std::string authorization = request.headers.count("authorization") ? request.headers.at("authorization") : "";
  auto field = [&](const std::string& name) {
    const std::size_t at = authorization.find(name + "=");
    if (at == std::string::npos) return std::string();
    const std::size_t start = at + name.size() + 1;
    return authorization.substr(start, authorization.find(',', start) - start);
  };
  if (!authorization.starts_with("AWS4-HMAC-SHA256 ")) return "no SigV4 Authorization: " + authorization;
  const std::string credential = field("Credential"), signed_names = field("SignedHeaders");
  const std::string date = request.headers.count("x-amz-date") ? request.headers.at("x-amz-date") : "";
  const std::string scope = credential.substr(credential.find('/') + 1);
  if (scope != date.substr(0, 8) + "/" + region + "/s3/aws4_request") return "scope " + scope;
  const std::string payload = request.headers.count("x-amz-content-sha256") ? request.headers.at("x-amz-content-sha256") : "";
  if (payload != sha256_hex(request.body)) return "x-amz-content-sha256 is not the body's SHA-256: " + payload;
  std::string canonical_headers;
  for (std::size_t start = 0; start <= signed_names.size();) {
    const std::size_t end = std::min(signed_names.find(';', start), signed_names.size());
    const std::string name = signed_names.substr(start, end - start);
    if (!request.headers.count(name)) return "signed header " + name + " was not sent";
    canonical_headers += name + ":" + request.headers.at(name) + "\n";
    start = end + 1;
  }
  for (const auto& [name, value] : request.headers) {
    if (name.starts_with("x-amz-") && (";" + signed_names + ";").find(";" + name + ";") == std::string::npos) {
      return "header " + name + " is sent unsigned";
    }
  }
  const std::size_t question = request.target.find('?');
  const std::string path = request.target.substr(0, question);
  const std::string query = question == std::string::npos ? "" : request.target.substr(question + 1);
  std::string sorted;  // SigV4 signs the query's parameters sorted by name
  {
    std::vector<std::string> parameters;
    for (std::size_t start = 0; start < query.size();) {
      const std::size_t end = std::min(query.find('&', start), query.size());
      parameters.push_back(query.substr(start, end - start));
      start = end + 1;
    }
    std::sort(parameters.begin(), parameters.end());
    for (const std::string& parameter : parameters) sorted += (sorted.empty() ? "" : "&") + parameter;
  }
  if (sorted != query) return "the query is not sent in signing order: " + query;
  const std::string canonical = request.method + "\n" + path + "\n" + query + "\n" + canonical_headers + "\n" +
                                signed_names + "\n" + payload;
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + date + "\n" + scope + "\n" + sha256_hex(canonical);
  std::string key = hmac_sha256("AWS4" + secret, date.substr(0, 8));
  key = hmac_sha256(key, region);
  key = hmac_sha256(key, "s3");
  key = hmac_sha256(key, "aws4_request");
  const std::string expected = hex(hmac_sha256(key, to_sign));
  return expected == field("Signature") ? "" : "signature " + field("Signature") + " is not " + expected;
}

std::string http_reply(const std::string& status, const std::string& body = {}) {
  return "HTTP/1.1 " + status + "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// s3rver checks no signature, so every request kind is signed and checked here.
TEST(RemoteS3Requests, EveryRequestIsSignedWithSigV4AndCarriesItsPayloadHash) {
  std::map<std::string, std::string> objects;
  RecordingServer server([&](const RecordingServer::Request& request) {
    const std::string path = request.target.substr(0, request.target.find('?'));
    if (request.method == "PUT") {
      objects[path] = request.body;
      return http_reply("200 OK");
    }
    if (request.target.find("list-type=2") != std::string::npos) {
      return http_reply("200 OK", "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
    }
    auto found = objects.find(path);
    if (found == objects.end()) {
      return http_reply("404 Not Found", request.method == "HEAD" ? "" : "<Error><Code>NoSuchKey</Code></Error>");
    }
    return http_reply("200 OK", request.method == "HEAD" ? "" : found->second);
  });
  RemoteConfig config = settings_of("s3://jit-cache/team", {{"remote_s3_endpoint", server.endpoint()},
                                                             {"remote_s3_region", "eu-central-1"},
                                                             {"remote_s3_access_key_id", "AKIATEST"},
                                                             {"remote_s3_secret_access_key", kSecret},
                                                             {"remote_s3_session_token", "session-token"}});
  S3Remote remote = client_of<S3Remote>(config);
  EXPECT_EQ(remote.load(kKey).status, RemoteStatus::miss);
  ASSERT_EQ(remote.save(kKey, std::string(100000, 'b'), nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(remote.load(kKey).status, RemoteStatus::ok);
  bool sent = false;
  ASSERT_EQ(remote.publish_inputs(Digest128{5, 5}, "record", &sent).status, RemoteStatus::ok);
  RemoteListing listing;
  ASSERT_EQ(remote.list_programs(&listing).status, RemoteStatus::ok);
  std::vector<RecordingServer::Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 6u);  // GET, PUT, GET, HEAD, PUT, GET ?list-type=2
  for (const RecordingServer::Request& request : requests) {
    EXPECT_EQ(sigv4_problem(request, kSecret, "eu-central-1"), "") << request.method << " " << request.target;
    EXPECT_EQ(request.headers.at("x-amz-security-token"), "session-token");
    EXPECT_NE(request.headers.at("authorization").find("Credential=AKIATEST/"), std::string::npos);
    for (const auto& [name, value] : request.headers) EXPECT_EQ(value.find(kSecret), std::string::npos) << name;
  }
  EXPECT_EQ(requests[1].method, "PUT");
  EXPECT_EQ(requests[1].target, "/jit-cache/" + remote.record_key(kKey));
  // Created only if absent after a miss; input records are content-addressed: plain PUT.
  EXPECT_EQ(requests[1].headers.count("if-none-match") ? requests[1].headers.at("if-none-match") : "", "*");
  EXPECT_EQ(requests[4].headers.count("if-none-match"), 0u);
  EXPECT_EQ(requests[5].target, "/jit-cache?list-type=2&max-keys=1000&prefix=team%2Fjitcache%2Fprogram%2F");
}

TEST(RemoteS3Requests, AConditionalCreateThatLostTheRaceIsStoredAndAServedKeyIsReplaced) {
  RecordingServer server([&](const RecordingServer::Request& request) {
    if (request.method == "PUT") {
      return request.headers.count("if-none-match") ? http_reply("412 Precondition Failed") : http_reply("200 OK");
    }
    return http_reply("404 Not Found");
  });
  RemoteConfig config = settings_of("s3://jit-cache", {{"remote_s3_endpoint", server.endpoint()},
                                                        {"remote_s3_access_key_id", "AKIATEST"},
                                                        {"remote_s3_secret_access_key", kSecret}});
  auto remote = open_remote(config);
  EXPECT_EQ(remote->load(kKey).status, RemoteStatus::miss);
  RemoteResult lost = remote->save(kKey, "binary", nlohmann::json::object());
  EXPECT_EQ(lost.status, RemoteStatus::ok) << lost.reason;  // another writer stored it first
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[1].headers.count("if-none-match"), 1u);  // the 412 answered the condition
  // A record that was there and failed its check is replaced, not kept by the condition.
  RecordingServer corrupt([&](const RecordingServer::Request& request) {
    return request.method == "PUT" ? (request.headers.count("if-none-match") ? http_reply("412 Precondition Failed")
                                                                            : http_reply("200 OK"))
                                   : http_reply("200 OK", "not a record");
  });
  config.scheme_settings["remote_s3_endpoint"] = corrupt.endpoint();
  auto again = open_remote(config);
  EXPECT_EQ(again->load(kKey).status, RemoteStatus::corrupt);
  EXPECT_EQ(again->save(kKey, "binary", nlohmann::json::object()).status, RemoteStatus::ok);
  ASSERT_EQ(corrupt.requests().size(), 2u);
  EXPECT_EQ(corrupt.requests()[1].headers.count("if-none-match"), 0u);
}

TEST(RemoteS3Requests, ServerRefusalsMapToTheirStatuses) {
  std::mutex answer_mutex;  // the server's thread reads what the test sets between requests
  std::string answer;
  RecordingServer server([&](const RecordingServer::Request&) {
    std::lock_guard lock(answer_mutex);
    return answer;
  });
  RemoteConfig config = settings_of("s3://jit-cache", {{"remote_s3_endpoint", server.endpoint()},
                                                        {"remote_s3_access_key_id", "AKIATEST"},
                                                        {"remote_s3_secret_access_key", kSecret}});
  auto status_of = [&](const std::string& status, const std::string& code, bool put) {
    {
      std::lock_guard lock(answer_mutex);
      answer = http_reply(status, "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code></Error>");
    }
    auto remote = open_remote(config);
    RemoteResult result = put ? remote->save(kKey, "b", nlohmann::json::object()) : remote->load(kKey);
    EXPECT_NE(result.reason.find(code), std::string::npos) << result.reason;
    return result.status;
  };
  EXPECT_EQ(status_of("403 Forbidden", "SignatureDoesNotMatch", false), RemoteStatus::rejected);
  EXPECT_EQ(status_of("403 Forbidden", "RequestTimeTooSkewed", false), RemoteStatus::rejected);
  EXPECT_EQ(status_of("403 Forbidden", "InvalidAccessKeyId", true), RemoteStatus::rejected);
  EXPECT_EQ(status_of("403 Forbidden", "AccessDenied", true), RemoteStatus::skipped);  // read-only bucket
  EXPECT_EQ(status_of("404 Not Found", "NoSuchBucket", false), RemoteStatus::error);
  EXPECT_EQ(status_of("301 Moved Permanently", "PermanentRedirect", false), RemoteStatus::error);
  EXPECT_EQ(status_of("400 Bad Request", "AuthorizationHeaderMalformed", false), RemoteStatus::error);
}

class RemoteS3 : public ::testing::Test {
 protected:
  void SetUp() override {
    JITCACHE_SKIP_WITHOUT_S3RVER();
    server = std::make_unique<S3Server>();
  }
  RemoteConfig config(const std::string& access_key_id = S3Server::kAccessKeyId) const {
    RemoteConfig config = settings_of(server->url(), {});
    server->configure(config, access_key_id);
    config.scheme_settings["remote_s3_secret_access_key"] = kSecret;
    return config;
  }
  std::unique_ptr<S3Server> server;
};

TEST_F(RemoteS3, AWrongAccessKeyIdIsRejectedAndTurnsTheRemoteOffWithoutShowingTheSecret) {
  auto right = open_remote(config());
  ASSERT_EQ(right->save(kKey, "binary", nlohmann::json::object()).status, RemoteStatus::ok);
  EXPECT_EQ(right->load(kKey).status, RemoteStatus::ok);
  auto wrong = open_remote(config("AKIANOBODYKNOWS"));
  RemoteResult refused = wrong->load(kKey);
  EXPECT_EQ(refused.status, RemoteStatus::rejected) << refused.reason;
  EXPECT_NE(refused.reason.find("InvalidAccessKeyId"), std::string::npos) << refused.reason;
  EXPECT_EQ(wrong->load(kKey).status, RemoteStatus::skipped);  // off: nothing more is sent
  for (const std::string& text : {refused.reason, wrong->describe(), right->describe()}) {
    EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  }
  EXPECT_EQ(right->describe(), server->url() + " at " + server->endpoint() + " (us-east-1, path-style)");
}

TEST_F(RemoteS3, CredentialsComeFromTheSharedCredentialsFileWhenTheSettingsHaveNone) {
  AwsEnvironment clean;
  TempDir tmp;
  write_text(tmp / "credentials", std::string("[jit]\naws_access_key_id = ") + S3Server::kAccessKeyId +
                                      "\naws_secret_access_key = " + kSecret + "\n[stranger]\n"
                                      "aws_access_key_id = AKIASTRANGER\naws_secret_access_key = x\n");
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", (tmp / "credentials").c_str(), 1);
  RemoteConfig from_file = config();
  from_file.scheme_settings.erase("remote_s3_access_key_id");
  from_file.scheme_settings.erase("remote_s3_secret_access_key");
  from_file.scheme_settings["remote_s3_profile"] = "jit";
  EXPECT_EQ(open_remote(from_file)->load(kKey).status, RemoteStatus::miss);
  from_file.scheme_settings["remote_s3_profile"] = "stranger";
  EXPECT_EQ(open_remote(from_file)->load(kKey).status, RemoteStatus::rejected);
  // No credentials anywhere: refused with the reason, nothing sent unsigned.
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", (tmp / "none").c_str(), 1);
  RemoteResult none = open_remote(from_file)->load(kKey);
  EXPECT_EQ(none.status, RemoteStatus::rejected);
  EXPECT_NE(none.reason.find("no S3 credentials"), std::string::npos) << none.reason;
}

TEST_F(RemoteS3, WarmListsPublishedProgramsAndFetchesTheirInputRecords) {
  S3Remote remote = client_of<S3Remote>(config());
  RemoteListing empty;
  ASSERT_EQ(remote.list_programs(&empty).status, RemoteStatus::ok);
  EXPECT_TRUE(empty.complete);
  EXPECT_TRUE(empty.programs.empty());
  RecordedInputs inputs;
  inputs.input = "__kernel void k() {}";
  const std::string record = encode_recorded_inputs(inputs);
  const Digest128 digest = xxh3_128(record);
  bool sent = false;
  ASSERT_EQ(remote.publish_inputs(digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_TRUE(sent);
  ASSERT_EQ(remote.publish_inputs(digest, record, &sent).status, RemoteStatus::ok);
  EXPECT_FALSE(sent) << "the bucket has it (HEAD): not sent again";
  for (std::uint64_t i = 1; i <= 3; ++i) {
    const Digest128 key{i, i};
    const nlohmann::json sidecar = {{"key", key.hex()},
                                    {"api", "opencl"},
                                    {"inputs", digest.hex()},
                                    {"device", "cpu-x"},
                                    {"created_by", "/usr/bin/app"},
                                    {"components", {{"device", {{"digest", Digest128{7, 7}.hex()}}}}}};
    ASSERT_EQ(remote.publish_program(key, *program_summary(sidecar, 1000)).status, RemoteStatus::ok);
  }
  // An object below program/ that is no summary name is not ours: left out, not refused.
  ASSERT_EQ(remote.put(remote.program_key(kKey) + ".tmp", "x", false).status, RemoteStatus::ok);
  RemoteListing listing;
  ASSERT_EQ(remote.list_programs(&listing).status, RemoteStatus::ok);
  EXPECT_TRUE(listing.complete);
  ASSERT_EQ(listing.programs.size(), 3u);
  EXPECT_TRUE(listing.refused.empty());
  EXPECT_EQ(listing.programs[0].summary["inputs"], digest.hex());
  RemoteResult fetched = remote.fetch_inputs(digest);
  ASSERT_EQ(fetched.status, RemoteStatus::ok) << fetched.reason;
  EXPECT_EQ(fetched.binary, record);
  // A summary that fails its check is refused with the reason, not listed.
  const std::string key = remote.program_key(Digest128{2, 2});
  std::string value = remote.get(key, 1 << 20).binary;
  value[value.size() / 2] ^= 1;
  ASSERT_EQ(remote.put(key, value, false).status, RemoteStatus::ok);
  RemoteListing tampered;
  ASSERT_EQ(remote.list_programs(&tampered).status, RemoteStatus::ok);
  EXPECT_EQ(tampered.programs.size(), 2u);
  EXPECT_EQ(tampered.refused.size(), 1u);
}

TEST(RemoteS3List, ThePageParserTakesKeysAndTheTokenAndNothingMalformed) {
  const S3ListPage page = parse_s3_list_page(
      "<?xml version=\"1.0\"?><ListBucketResult><KeyCount>3</KeyCount><Contents><Key>a/program/1</Key></Contents>"
      "<Contents><Key>a&amp;b</Key></Contents><Contents><Key>" + std::string(2000, 'k') + "</Key></Contents>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>1/x+y==</NextContinuationToken>"
      "<Contents><Key>unterminated");
  EXPECT_EQ(page.keys, (std::vector<std::string>{"a/program/1", "a&b"}));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_token, "1/x+y==");
  EXPECT_FALSE(parse_s3_list_page("<IsTruncated>false</IsTruncated>").truncated);
  EXPECT_TRUE(parse_s3_list_page("").keys.empty());
}

TEST_F(RemoteS3, DoctorFindsTheBucketListableTheClockCloseAndNamesTheCredentialsSource) {
  auto remote = open_remote(config());
  ASSERT_EQ(remote->load(kKey).status, RemoteStatus::miss);
  std::map<std::string, RemoteFinding> findings;
  for (RemoteFinding& finding : remote->check(false)) findings[finding.aspect] = finding;
  EXPECT_EQ(findings["listing"].verdict, "ok") << findings["listing"].detail;
  EXPECT_EQ(findings["clock"].verdict, "ok") << findings["clock"].detail;  // s3rver runs on this host's clock
  EXPECT_NE(findings["clock"].detail.find("s "), std::string::npos) << findings["clock"].detail;
  EXPECT_EQ(findings["credentials"].detail, "from settings");
  for (const auto& [aspect, finding] : findings) EXPECT_EQ(finding.detail.find(kSecret), std::string::npos);
}

// The tool: --version lists the scheme, doctor checks the remote, and no secret is ever printed.
TEST_F(RemoteS3, TheToolListsTheSchemeChecksTheRemoteAndPrintsNoSecret) {
  TempDir tmp;
  RunOptions options;
  options.env = server->environment();
  options.env["JITCACHE_REMOTE_S3_SECRET_ACCESS_KEY"] = kSecret;
  options.env["AWS_SESSION_TOKEN"] = "session-token-never-shown";
  options.env["JITCACHE_REMOTE"] = server->url();
  options.unset = {"LD_PRELOAD", "JITCACHE_DIR", "JITCACHE_REMOTE_HMAC_KEY"};
  RunResult version = run({JITCACHE_TOOL, "--version"}, options);
  EXPECT_NE(version.out.find("remote-s3"), std::string::npos) << version.out;
  RunResult doctor = run({JITCACHE_TOOL, "--dir", (tmp / "cache").string(), "doctor"}, options);
  EXPECT_NE(doctor.out.find("answers in"), std::string::npos) << doctor.out << doctor.err;
  EXPECT_NE(doctor.out.find(server->url() + " at " + server->endpoint()), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("(with a session token)"), std::string::npos) << doctor.out;
  RunResult config = run({JITCACHE_TOOL, "--dir", (tmp / "cache").string(), "config"}, options);
  EXPECT_NE(config.out.find("remote_s3_secret_access_key"), std::string::npos) << config.out;
  EXPECT_NE(config.out.find("***"), std::string::npos) << config.out;
  for (const RunResult* result : {&version, &doctor, &config}) {
    EXPECT_EQ(result->out.find(kSecret), std::string::npos) << result->out;
    EXPECT_EQ(result->err.find(kSecret), std::string::npos) << result->err;
    EXPECT_EQ(result->out.find("session-token-never-shown"), std::string::npos) << result->out;
  }
}

}  // namespace
}  // namespace jitcache::testing

// The libcurl side every HTTP-speaking remote shares (store/remote/http_remote.hpp,
// store/remote/s3_remote.hpp): one handle per client kept between calls (keep-alive), dropped after
// a failed transfer or in a forked child; one request at a time through the client's RemoteGate
// (one total deadline, back-off); the reply body capped (a lying Content-Length or an endless
// chunked body is cut off); no redirect followed; only http and https spoken. What a status means
// and how a request authenticates is the scheme's (its `judge` and `authenticate`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote/remote_gate.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

enum class HttpMethod { get, put, head };

struct HttpExchange {
  HttpExchange(HttpMethod how, std::string where, std::string_view sent, std::size_t reply_cap)
      : method(how), url(std::move(where)), upload(sent), cap(reply_cap) {}
  HttpMethod method;
  std::string url;
  std::string_view upload;
  std::size_t cap;                   // of the reply's body
  std::vector<std::string> headers;  // "Name: value" lines sent with the request

  long status = 0;
  std::string body;
  bool over = false;        // the body passed the cap (the transfer was cut off)
  std::int64_t length = -1;  // the reply's Content-Length, -1 when none
  std::string date;         // the reply's Date header, as sent
};

class CurlTransport {
 public:
  CurlTransport() = default;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;
  ~CurlTransport();

  // Sets this request's credentials on the curl handle (a CURL*); called before each request.
  using Authenticate = std::function<void(void* handle)>;
  // What a completed exchange's status means (ok, miss, ...): a failure starts the gate's back-off.
  using Judge = std::function<RemoteResult(const HttpExchange&)>;

  // One request through the gate, by its deadline.
  RemoteResult run(const RemoteConfig& config, HttpExchange& exchange, const Authenticate& authenticate,
                   const Judge& judge);

 private:
  RemoteGate gate_;
  void* handle_ = nullptr;        // a CURL*, kept between calls: its connection is reused
  std::uint64_t handle_owner_ = 0;  // the process that opened it: only it may clean it up
};

// `text` as a URL path: unreserved characters and '/' pass, anything else is percent-encoded.
std::string encode_url_path(std::string_view text);
// `text` as a query value (SigV4's UriEncode): as a path, but '/' is encoded too.
std::string encode_url_query_value(std::string_view text);

}  // namespace jitcache

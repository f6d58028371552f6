#include "store/remote/curl_transport.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "store/files/file_ops.hpp"

namespace jitcache {
namespace {

using Clock = std::chrono::steady_clock;

// Receives the body; more than the cap aborts the transfer (a chunked reply announces nothing).
size_t receive(char* data, size_t size, size_t count, void* user) {
  HttpExchange& exchange = *static_cast<HttpExchange*>(user);
  const std::size_t bytes = size * count;
  if (exchange.body.size() + bytes > exchange.cap) {
    exchange.over = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  exchange.body.append(data, bytes);
  return bytes;
}

// Keeps the reply's Date (a remote's clock check); every other header is curl's business.
size_t receive_header(char* data, size_t size, size_t count, void* user) {
  HttpExchange& exchange = *static_cast<HttpExchange*>(user);
  const std::size_t bytes = size * count;
  std::string_view line(data, bytes);
  constexpr std::string_view kDate = "date:";
  if (line.size() > kDate.size() && line.size() < 256 &&
      std::equal(kDate.begin(), kDate.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    line.remove_prefix(kDate.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    exchange.date = std::string(line);
  }
  return bytes;
}

// A curl failure as the remote's status: certificates and bad settings will not pass by retrying.
RemoteResult transfer_failure(CURLcode code, const char* detail, const HttpExchange& exchange) {
  std::string reason = detail && *detail ? detail : curl_easy_strerror(code);
  const std::string too_large = "reply larger than " + std::to_string(exchange.cap) + " bytes refused";
  if (exchange.over) return remote_result(RemoteStatus::error, too_large);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return remote_result(RemoteStatus::timeout, reason);
    case CURLE_FILESIZE_EXCEEDED: return remote_result(RemoteStatus::error, too_large);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT: return remote_result(RemoteStatus::rejected, reason);
    default: return remote_result(RemoteStatus::error, reason);
  }
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request on `handle` by `deadline`. Options are set afresh each time (curl_easy_reset keeps
// the open connection): nothing a previous call set leaks into this one.
CURLcode perform(CURL* handle, const RemoteConfig& config, const RemoteGate::Call& call, HttpExchange& exchange,
                 const CurlTransport::Authenticate& authenticate, char* error_text) {
  curl_easy_reset(handle);
  auto left = [](Deadline until) {
    return std::max<long>(1, static_cast<long>(
                                 std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count()));
  };
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(handle, CURLOPT_URL, exchange.url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect is an error, never followed
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);        // threads: no SIGALRM for name lookups
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, left(std::min(call.connect_deadline, call.deadline)));
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, left(call.deadline));
  // (Not for HEAD: its Content-Length is the file's, not a body to read.)
  if (exchange.method != HttpMethod::head) {
    curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(exchange.cap));
  }
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, receive);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &exchange);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, receive_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &exchange);
  if (!config.ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, config.ca_file.c_str());
  if (authenticate) authenticate(handle);
  curl_slist* headers = nullptr;
  for (const std::string& header : exchange.headers) headers = curl_slist_append(headers, header.c_str());
  if (headers) curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  if (exchange.method == HttpMethod::put) {
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(exchange.upload.size()));
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, exchange.upload.data());
  } else if (exchange.method == HttpMethod::head) {
    curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  }
  CURLcode code = curl_easy_perform(handle);
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  if (code == CURLE_OK) {
    curl_off_t length = -1;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &exchange.status);
    curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    exchange.length = static_cast<std::int64_t>(length);
  }
  return code;
}

}  // namespace

CurlTransport::~CurlTransport() {
  if (handle_ && handle_owner_ == fileops::current_process_id()) curl_easy_cleanup(static_cast<CURL*>(handle_));
}

RemoteResult CurlTransport::run(const RemoteConfig& config, HttpExchange& exchange, const Authenticate& authenticate,
                                const Judge& judge) {
  return gate_.run(config, [&](const RemoteGate::Call& call) {
    // A forked child never uses (or cleans up: TLS would send the parent's close_notify) the
    // parent's handle and its connection.
    if (call.forked) handle_ = nullptr;
    if (!handle_) {
      global_init();
      handle_ = curl_easy_init();
      handle_owner_ = fileops::current_process_id();
      if (!handle_) return remote_result(RemoteStatus::error, "cannot start libcurl");
    }
    char error_text[CURL_ERROR_SIZE] = {};
    CURLcode code = perform(static_cast<CURL*>(handle_), config, call, exchange, authenticate, error_text);
    if (code != CURLE_OK) {
      // The connection may be mid-reply: never reuse it.
      curl_easy_cleanup(static_cast<CURL*>(handle_));
      handle_ = nullptr;
      return transfer_failure(code, error_text, exchange);
    }
    return judge(exchange);
  });
}

namespace {

std::string percent_encoded(std::string_view text, bool slash_passes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (slash_passes && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string encode_url_path(std::string_view text) { return percent_encoded(text, true); }
std::string encode_url_query_value(std::string_view text) { return percent_encoded(text, false); }

}  // namespace jitcache

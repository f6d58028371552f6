#include "store/remote/http_remote.hpp"

#include <curl/curl.h>

#include <atomic>
#include <cctype>
#include <mutex>

#include "hashing/bounded_json.hpp"
#include "store/files/file_ops.hpp"
#include "store/remote/remote_gate.hpp"
#include "store/remote/remote_programs.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache {
namespace {

using Clock = std::chrono::steady_clock;

// Path segments as sent: unreserved characters and '/' pass, anything else is percent-encoded.
std::string encode_path(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
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

// (Named, not anonymous: a member of Exchange below, which the header declares.)
namespace http_remote_detail {
struct Body {
  std::string data;
  std::size_t cap = 0;
  bool over = false;
};
}  // namespace http_remote_detail
using http_remote_detail::Body;

namespace {

// Receives the body; more than the cap aborts the transfer (a chunked reply announces nothing).
size_t receive(char* data, size_t size, size_t count, void* user) {
  Body& body = *static_cast<Body*>(user);
  const std::size_t bytes = size * count;
  if (body.data.size() + bytes > body.cap) {
    body.over = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  body.data.append(data, bytes);
  return bytes;
}

// A curl failure as the remote's status: certificates and bad settings will not pass by retrying.
RemoteResult transfer_failure(CURLcode code, const char* detail, const Body& body) {
  std::string reason = detail && *detail ? detail : curl_easy_strerror(code);
  if (body.over) return remote_result(RemoteStatus::error, "reply larger than " + std::to_string(body.cap) + " bytes refused");
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return remote_result(RemoteStatus::timeout, reason);
    case CURLE_FILESIZE_EXCEEDED:
      return remote_result(RemoteStatus::error, "reply larger than " + std::to_string(body.cap) + " bytes refused");
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

}  // namespace

struct HttpRemote::State {
  RemoteGate gate;
  CURL* handle = nullptr;  // kept between calls: its connection is reused (keep-alive)
  std::uint64_t handle_owner = 0;  // the process that opened it: only it may clean it up
  std::atomic<bool> writes_refused{false};
};

// The scheme opens its client here, where the client is known (http_scheme.cpp is not).
std::unique_ptr<RemoteClient> HttpEndpoint::open(RemoteConfig config) const {
  return std::make_unique<HttpRemote>(*this, std::move(config));
}

HttpRemote::HttpRemote(HttpEndpoint endpoint, RemoteConfig config)
    : endpoint_(std::move(endpoint)), config_(std::move(config)), state_(std::make_unique<State>()) {
  std::string space = remote_namespace(config_);
  for (char& c : space) c = c == ':' ? '/' : c;
  namespace_path_ = encode_path(space);
}

HttpRemote::~HttpRemote() {
  if (state_->handle && state_->handle_owner == fileops::current_process_id()) curl_easy_cleanup(state_->handle);
}

std::string HttpRemote::describe() const {
  return endpoint_.redacted() + (config_.scheme_setting(kBearerTokenSetting).empty() ? "" : " (bearer token)");
}

// A server that cannot be listed: what this node does is all there is to say.
std::vector<RemoteFinding> HttpRemote::check(bool /*read_only*/) { return signing_findings(config_); }

std::string HttpRemote::record_path(const Digest128& key) const {
  const std::string hex = key.hex();
  return namespace_path_ + "/" + hex.substr(0, 2) + "/" + hex.substr(2);
}
std::string HttpRemote::inputs_path(const Digest128& digest) const { return namespace_path_ + "/inputs/" + digest.hex(); }
std::string HttpRemote::program_path(const Digest128& key) const { return namespace_path_ + "/program/" + key.hex(); }

namespace http_remote_detail {

enum class Method { get, put, head };

struct Exchange {
  Exchange(Method how, std::string where, std::string_view sent, std::size_t reply_cap)
      : method(how), url(std::move(where)), upload(sent), cap(reply_cap) {}
  Method method;
  std::string url;
  std::string_view upload;
  std::size_t cap;  // of the reply's body
  long status = 0;
  Body body;
  curl_off_t length = -1;
};

}  // namespace http_remote_detail

using http_remote_detail::Exchange;
using http_remote_detail::Method;

namespace {

// One request on `handle` by `deadline`. Options are set afresh each time (curl_easy_reset keeps
// the open connection): nothing a previous call set leaks into this one.
CURLcode perform(CURL* handle, const HttpEndpoint& endpoint, const RemoteConfig& config, const RemoteGate::Call& call,
                 Exchange& exchange, char* error_text) {
  curl_easy_reset(handle);
  auto left = [](Deadline until) {
    return std::max<long>(1, static_cast<long>(
                                 std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count()));
  };
  exchange.body.cap = exchange.cap;
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(handle, CURLOPT_URL, exchange.url.c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect is an error, never followed
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);        // threads: no SIGALRM for name lookups
  curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, left(std::min(call.connect_deadline, call.deadline)));
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, left(call.deadline));
  // (Not for HEAD: its Content-Length is the file's, not a body to read.)
  if (exchange.method != Method::head) curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(exchange.cap));
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, receive);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &exchange.body);
  if (!config.ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, config.ca_file.c_str());
  const std::string& bearer_token = config.scheme_setting(kBearerTokenSetting);
  if (!bearer_token.empty()) {
    curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(handle, CURLOPT_XOAUTH2_BEARER, bearer_token.c_str());
  } else if (!endpoint.credentials.user.empty() || !endpoint.credentials.password.empty()) {
    curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(handle, CURLOPT_USERNAME, endpoint.credentials.user.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, endpoint.credentials.password.c_str());
  }
  curl_slist* headers = nullptr;
  if (exchange.method == Method::put) {
    // No "Expect: 100-continue" round trip (a second wait on large records), no form encoding.
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(exchange.upload.size()));
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, exchange.upload.data());
  } else if (exchange.method == Method::head) {
    curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  }
  CURLcode code = curl_easy_perform(handle);
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(headers);
  if (code == CURLE_OK) {
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &exchange.status);
    curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &exchange.length);
  }
  return code;
}

// What a completed exchange's status means: 200 (201, 204 for PUT) ok, 404 miss, 401/403 refused.
RemoteResult judge(const Exchange& exchange) {
  const long status = exchange.status;
  if (status == 200 || (exchange.method == Method::put && (status == 201 || status == 204))) return remote_result(RemoteStatus::ok);
  if (status == 404 && exchange.method != Method::put) return remote_result(RemoteStatus::miss);
  const std::string reason = "HTTP " + std::to_string(status);
  // A server that takes reads but refuses writes is read-only, not down: writes stop, reads go on.
  if (exchange.method == Method::put && (status == 403 || status == 405)) {
    return remote_result(RemoteStatus::skipped, reason + ": the server refuses writes (JITCACHE_REMOTE_READ_ONLY=1 says so)");
  }
  if (status == 401 || status == 403) return remote_result(RemoteStatus::rejected, reason + ": credentials refused");
  return remote_result(RemoteStatus::error, reason + (status >= 300 && status < 400 ? " (redirects are not followed)" : ""));
}

}  // namespace

RemoteResult HttpRemote::get(const std::string& path, std::size_t max_bytes) {
  Exchange exchange{Method::get, endpoint_.base_url() + "/" + path, {}, max_bytes};
  RemoteResult got = this->exchange(exchange);
  if (got.status == RemoteStatus::ok) got.binary = std::move(exchange.body.data);
  return got;
}

RemoteResult HttpRemote::put(const std::string& path, std::string_view body) {
  if (state_->writes_refused) return remote_result(RemoteStatus::skipped, "the server refused a write before");
  Exchange exchange{Method::put, endpoint_.base_url() + "/" + path, body, 64u << 10};
  RemoteResult stored = this->exchange(exchange);
  if (stored.status == RemoteStatus::skipped && exchange.status != 0) state_->writes_refused = true;
  return stored;
}

RemoteResult HttpRemote::head(const std::string& path, std::uint64_t* size) {
  Exchange exchange{Method::head, endpoint_.base_url() + "/" + path, {}, 0};
  RemoteResult checked = this->exchange(exchange);
  *size = exchange.length < 0 ? 0 : static_cast<std::uint64_t>(exchange.length);
  return checked;
}

RemoteResult HttpRemote::exchange(Exchange& exchange) {
  State& state = *state_;
  const RemoteConfig& config = config_;
  return state.gate.run(config, [&](const RemoteGate::Call& call) {
    // A forked child never uses (or cleans up: TLS would send the parent's close_notify) the
    // parent's handle and its connection.
    if (call.forked) state.handle = nullptr;
    if (!state.handle) {
      global_init();
      state.handle = curl_easy_init();
      state.handle_owner = fileops::current_process_id();
      if (!state.handle) return remote_result(RemoteStatus::error, "cannot start libcurl");
    }
    char error_text[CURL_ERROR_SIZE] = {};
    CURLcode code = perform(state.handle, endpoint_, config, call, exchange, error_text);
    if (code != CURLE_OK) {
      // The connection may be mid-reply: never reuse it.
      curl_easy_cleanup(state.handle);
      state.handle = nullptr;
      return transfer_failure(code, error_text, exchange.body);
    }
    return judge(exchange);
  });
}

RemoteResult HttpRemote::load(const Digest128& key) {
  RemoteResult fetched = get(record_path(key), config_.max_reply_bytes);
  if (fetched.status != RemoteStatus::ok) return fetched;
  return checked_record(key, fetched.binary, config_.hmac_key);
}

RemoteResult HttpRemote::save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) {
  return put(record_path(key), encode_record(key, binary, sidecar, config_.hmac_key));
}

RemoteResult HttpRemote::acquire_lease(const Digest128&, const std::string&) { return remote_result(RemoteStatus::ok); }
RemoteResult HttpRemote::lease_exists(const Digest128&) { return remote_result(RemoteStatus::miss); }
RemoteResult HttpRemote::release_lease(const Digest128&, const std::string&) { return remote_result(RemoteStatus::ok); }

RemoteResult HttpRemote::publish_inputs(const Digest128& digest, std::string_view record, bool* sent) {
  *sent = false;
  if (record.size() > kMaxRemoteInputsBytes) {
    return remote_result(RemoteStatus::skipped, "input record of " + std::to_string(record.size()) + " bytes is over the cap");
  }
  const std::string path = inputs_path(digest);
  const std::string value = encode_inputs_blob(digest, record, config_.hmac_key);
  std::uint64_t size = 0;
  RemoteResult checked = head(path, &size);
  if (checked.failed() || checked.status == RemoteStatus::skipped) return checked;
  if (checked.status == RemoteStatus::ok && size == value.size()) return checked;
  RemoteResult stored = put(path, value);
  *sent = stored.status == RemoteStatus::ok;
  return stored;
}

RemoteResult HttpRemote::publish_program(const Digest128& key, const nlohmann::json& summary) {
  std::string value;
  if (RemoteResult framed = encode_program_blob(key, summary, config_.hmac_key, &value); framed.status != RemoteStatus::ok) {
    return framed;
  }
  return put(program_path(key), value);
}

RemoteResult HttpRemote::list_programs(RemoteListing* listing) {
  constexpr std::size_t kMaxIndexBytes = kMaxJsonBytes;  // about 120 000 names in nginx's JSON
  const std::string folder = namespace_path_ + "/program/";
  RemoteResult index = get(folder, kMaxIndexBytes);
  if (index.status == RemoteStatus::miss) {  // nothing published yet
    listing->complete = true;
    return remote_result(RemoteStatus::ok);
  }
  if (index.status != RemoteStatus::ok) return index;
  const nlohmann::json names = parse_untrusted_json(index.binary);
  if (!names.is_array()) {
    return remote_result(RemoteStatus::error, "GET " + folder + " is not a JSON listing (nginx: autoindex on; autoindex_format json)");
  }
  for (const nlohmann::json& item : names) {
    const std::string name = item.is_object() ? string_member(item, "name") : std::string();
    std::optional<Digest128> key = name.size() == 32 ? Digest128::from_hex(name) : std::nullopt;
    if (!key) continue;  // a temporary file of a PUT in progress, or not ours
    RemoteResult got = get(program_path(*key), kMaxProgramSummaryBytes + kBlobOverhead);
    if (got.status == RemoteStatus::miss) continue;  // gone since the listing
    if (got.status != RemoteStatus::ok) return got;
    add_program_summary(folder + name, *key, got.binary, config_.hmac_key, listing);
  }
  listing->complete = true;
  return remote_result(RemoteStatus::ok);
}

RemoteResult HttpRemote::fetch_inputs(const Digest128& digest) {
  RemoteResult got = get(inputs_path(digest), kMaxRemoteInputsBytes + kBlobOverhead);
  if (got.status != RemoteStatus::ok) return got;
  return check_inputs_blob(digest, got.binary, config_.hmac_key);
}

}  // namespace jitcache

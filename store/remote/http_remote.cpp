#include "store/remote/http_remote.hpp"

#include <curl/curl.h>

#include <atomic>

#include "hashing/bounded_json.hpp"
#include "store/remote/remote_programs.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache {

struct HttpRemote::State {
  CurlTransport transport;
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
  namespace_path_ = encode_url_path(space);
}

HttpRemote::~HttpRemote() = default;

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

namespace {

// basic auth from the URL, or remote_bearer_token (which wins); never in the URL curl is given.
void authenticate(CURL* handle, const HttpEndpoint& endpoint, const RemoteConfig& config) {
  const std::string& bearer_token = config.scheme_setting(kBearerTokenSetting);
  if (!bearer_token.empty()) {
    curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(handle, CURLOPT_XOAUTH2_BEARER, bearer_token.c_str());
  } else if (!endpoint.credentials.user.empty() || !endpoint.credentials.password.empty()) {
    curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(handle, CURLOPT_USERNAME, endpoint.credentials.user.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, endpoint.credentials.password.c_str());
  }
}

// What a completed exchange's status means: 200 (201, 204 for PUT) ok, 404 miss, 401/403 refused.
RemoteResult judge_http_status(const HttpExchange& exchange) {
  const long status = exchange.status;
  if (status == 200 || (exchange.method == HttpMethod::put && (status == 201 || status == 204))) return remote_result(RemoteStatus::ok);
  if (status == 404 && exchange.method != HttpMethod::put) return remote_result(RemoteStatus::miss);
  const std::string reason = "HTTP " + std::to_string(status);
  // A server that takes reads but refuses writes is read-only, not down: writes stop, reads go on.
  if (exchange.method == HttpMethod::put && (status == 403 || status == 405)) {
    return remote_result(RemoteStatus::skipped, reason + ": the server refuses writes (JITCACHE_REMOTE_READ_ONLY=1 says so)");
  }
  if (status == 401 || status == 403) return remote_result(RemoteStatus::rejected, reason + ": credentials refused");
  return remote_result(RemoteStatus::error, reason + (status >= 300 && status < 400 ? " (redirects are not followed)" : ""));
}

}  // namespace

RemoteResult HttpRemote::get(const std::string& path, std::size_t max_bytes) {
  HttpExchange exchange{HttpMethod::get, endpoint_.base_url() + "/" + path, {}, max_bytes};
  RemoteResult got = this->exchange(exchange);
  if (got.status == RemoteStatus::ok) got.binary = std::move(exchange.body);
  return got;
}

RemoteResult HttpRemote::put(const std::string& path, std::string_view body) {
  if (state_->writes_refused) return remote_result(RemoteStatus::skipped, "the server refused a write before");
  HttpExchange exchange{HttpMethod::put, endpoint_.base_url() + "/" + path, body, 64u << 10};
  // No "Expect: 100-continue" round trip (a second wait on large records), no form encoding.
  exchange.headers = {"Expect:", "Content-Type: application/octet-stream"};
  RemoteResult stored = this->exchange(exchange);
  if (stored.status == RemoteStatus::skipped && exchange.status != 0) state_->writes_refused = true;
  return stored;
}

RemoteResult HttpRemote::head(const std::string& path, std::uint64_t* size) {
  HttpExchange exchange{HttpMethod::head, endpoint_.base_url() + "/" + path, {}, 0};
  RemoteResult checked = this->exchange(exchange);
  *size = exchange.length < 0 ? 0 : static_cast<std::uint64_t>(exchange.length);
  return checked;
}

RemoteResult HttpRemote::exchange(HttpExchange& exchange) {
  return state_->transport.run(
      config_, exchange, [&](void* handle) { authenticate(static_cast<CURL*>(handle), endpoint_, config_); }, judge_http_status);
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
  const std::string path = inputs_path(digest);
  return publish_inputs_unless_there(
      digest, record, config_.hmac_key, [&](std::uint64_t* size) { return head(path, size); },
      [&](const std::string& value) { return put(path, value); }, sent);
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

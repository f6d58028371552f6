#include "store/remote/s3_remote.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <ctime>
#include <mutex>
#include <set>

#include "store/remote/remote_programs.hpp"
#include "store/remote/remote_record.hpp"

namespace jitcache {
namespace {

// ListObjectsV2: pages of at most 1000 names (S3's own cap), each reply and the whole walk bounded.
constexpr std::size_t kMaxListPageBytes = 4u << 20;
constexpr std::uint64_t kMaxListingBytes = 256ull << 20;
constexpr std::size_t kMaxErrorBytes = 64u << 10;
// Keys this client saw a record under (served, corrupt, forged): a save of one of them replaces
// it. Bounded: past it the set starts over (a forgotten key is created conditionally: at worst a
// bad record stays until it is removed on the server).
constexpr std::size_t kMaxReplaceableKeys = 4096;
// S3 refuses a signature 15 minutes away from its clock; doctor warns well before.
constexpr std::int64_t kClockSkewWarnS = 300;

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// A server's error code as it may appear in a reason: a word of at most 64 letters and digits.
std::string error_code(const HttpExchange& exchange) {
  std::string code = s3_xml_element(std::string_view(exchange.body).substr(0, 4096), "Code");
  const bool word = code.size() <= 64 && std::all_of(code.begin(), code.end(), [](unsigned char c) {
                      return std::isalnum(c) != 0;
                    });
  return word ? code : std::string();
}

std::string hint(const std::string& code) {
  if (code == "RequestTimeTooSkewed") return " (this host's clock is more than 15 minutes off the server's)";
  if (code == "SignatureDoesNotMatch") return " (a wrong secret access key, or a wrong region)";
  if (code == "InvalidAccessKeyId") return " (the server knows no such access key id)";
  if (code == "AccessDenied") return " (a key without s3:ListBucket is answered so for a missing object too)";
  if (code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed") return " (the bucket is in another region?)";
  return {};
}

// What a completed exchange's status means: 200 (201, 204 for PUT) ok, 404 miss, 412 on a
// conditional create ok (stored by someone else), 401 / 403 refused, a PUT refused by the
// bucket's policy (AccessDenied) read-only; everything else an error.
RemoteResult judge_s3_status(const HttpExchange& exchange) {
  const long status = exchange.status;
  const bool put = exchange.method == HttpMethod::put;
  if (status == 200 || (put && (status == 201 || status == 204))) return remote_result(RemoteStatus::ok);
  const std::string code = status >= 300 ? error_code(exchange) : std::string();
  if (status == 404 && !put && code != "NoSuchBucket") return remote_result(RemoteStatus::miss);
  if (put && (status == 412 || (status == 409 && code == "ConditionalRequestConflict"))) return remote_result(RemoteStatus::ok);
  const std::string reason = "HTTP " + std::to_string(status) + (code.empty() ? "" : " " + code);
  if (put && status == 403 && code == "AccessDenied") {
    return remote_result(RemoteStatus::skipped,
                  reason + ": the bucket refuses this key's writes (JITCACHE_REMOTE_READ_ONLY=1 says so)");
  }
  if (status == 401 || status == 403) return remote_result(RemoteStatus::rejected, reason + ": credentials refused" + hint(code));
  if (status >= 300 && status < 400) return remote_result(RemoteStatus::error, reason + " (redirects are not followed)" + hint(code));
  return remote_result(RemoteStatus::error, reason + (code == "NoSuchBucket" ? " (no such bucket on this server)" : hint(code)));
}

std::string decode_entities(std::string_view text) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, c] : kEntities) {
        if (text.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace

std::string s3_xml_element(std::string_view xml, std::string_view tag) {
  const std::string open = "<" + std::string(tag) + ">";
  const std::string close = "</" + std::string(tag) + ">";
  const std::size_t start = xml.find(open);
  if (start == std::string_view::npos) return {};
  const std::size_t end = xml.find(close, start + open.size());
  if (end == std::string_view::npos) return {};
  return decode_entities(xml.substr(start + open.size(), end - start - open.size()));
}

S3ListPage parse_s3_list_page(std::string_view xml) {
  constexpr std::size_t kMaxKeyBytes = 1024;  // S3's own limit on a key's length
  S3ListPage page;
  constexpr std::string_view kOpen = "<Key>", kClose = "</Key>";
  for (std::size_t at = xml.find(kOpen); at != std::string_view::npos; at = xml.find(kOpen, at)) {
    at += kOpen.size();
    const std::size_t end = xml.find(kClose, at);
    if (end == std::string_view::npos) break;
    if (end - at <= kMaxKeyBytes) page.keys.push_back(decode_entities(xml.substr(at, end - at)));
    at = end + kClose.size();
  }
  page.truncated = s3_xml_element(xml, "IsTruncated") == "true";
  page.next_token = s3_xml_element(xml, "NextContinuationToken");
  if (page.next_token.size() > 4096) page.next_token.clear();  // not a token a server would send
  return page;
}

struct S3Remote::State {
  CurlTransport transport;
  std::atomic<bool> writes_refused{false};
  std::mutex replaceable_mutex;
  std::set<std::string> replaceable;  // key hex
};

// The scheme opens its client here, where the client is known (s3_scheme.cpp is not).
std::unique_ptr<RemoteClient> S3Endpoint::open(RemoteConfig config) const {
  return std::make_unique<S3Remote>(*this, std::move(config));
}

S3Remote::S3Remote(S3Endpoint endpoint, RemoteConfig config)
    : endpoint_(std::move(endpoint)), config_(std::move(config)), state_(std::make_unique<State>()) {
  std::string space = remote_namespace(config_);
  for (char& c : space) c = c == ':' ? '/' : c;
  key_prefix_ = (endpoint_.prefix.empty() ? "" : endpoint_.prefix + "/") + encode_url_path(space);
  location_ = endpoint_.locate(config_, &setup_error_);
  if (location_) credentials_ = s3_credentials(config_, &setup_error_);
}

S3Remote::~S3Remote() = default;

std::string S3Remote::describe() const {
  if (!location_) return endpoint_.redacted();
  return endpoint_.redacted() + " at " + location_->endpoint + " (" + location_->region + ", " +
         (location_->path_style ? "path-style" : "virtual-host") + ")";
}

std::string S3Remote::record_key(const Digest128& key) const {
  const std::string hex = key.hex();
  return key_prefix_ + "/" + hex.substr(0, 2) + "/" + hex.substr(2);
}
std::string S3Remote::inputs_key(const Digest128& digest) const { return key_prefix_ + "/inputs/" + digest.hex(); }
std::string S3Remote::program_key(const Digest128& key) const { return key_prefix_ + "/program/" + key.hex(); }

std::string S3Remote::object_url(const std::string& key) const { return location_->bucket_url + "/" + key; }

RemoteResult S3Remote::exchange(HttpExchange& exchange) {
  if (!setup_error_.empty()) return remote_result(RemoteStatus::rejected, setup_error_);
  // libcurl 7.88 signs with the payload hash of this header when present and never adds it,
  // while S3 servers want it on every request: the real SHA-256 (empty for GET and HEAD).
  exchange.headers.push_back("x-amz-content-sha256: " + sha256_hex(exchange.upload));
  if (!credentials_->session_token.empty()) {
    exchange.headers.push_back("x-amz-security-token: " + credentials_->session_token);
  }
  const std::string sigv4 = "aws:amz:" + location_->region + ":s3";
  const S3Credentials& credentials = *credentials_;
  return state_->transport.run(
      config_, exchange,
      [&](void* handle) {
        curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4.c_str());
        curl_easy_setopt(handle, CURLOPT_USERNAME, credentials.access_key_id.c_str());
        curl_easy_setopt(handle, CURLOPT_PASSWORD, credentials.secret_access_key.c_str());
      },
      judge_s3_status);
}

RemoteResult S3Remote::get(const std::string& key, std::size_t max_bytes) {
  if (!location_) return remote_result(RemoteStatus::rejected, setup_error_);
  HttpExchange exchange{HttpMethod::get, object_url(key), {}, max_bytes};
  RemoteResult got = this->exchange(exchange);
  if (got.status == RemoteStatus::ok) got.binary = std::move(exchange.body);
  return got;
}

RemoteResult S3Remote::put(const std::string& key, std::string_view body, bool create_only) {
  if (!location_) return remote_result(RemoteStatus::rejected, setup_error_);
  if (state_->writes_refused) return remote_result(RemoteStatus::skipped, "the bucket refused a write before");
  HttpExchange exchange{HttpMethod::put, object_url(key), body, kMaxErrorBytes};
  // Every header is signed (libcurl 7.88 signs all it is given): none that is not sent, so no
  // "Expect:" to turn off 100-continue (which S3 servers answer).
  exchange.headers = {"Content-Type: application/octet-stream"};
  if (create_only) exchange.headers.push_back("If-None-Match: *");
  RemoteResult stored = this->exchange(exchange);
  if (stored.status == RemoteStatus::skipped && exchange.status != 0) state_->writes_refused = true;
  return stored;
}

RemoteResult S3Remote::head(const std::string& key, std::uint64_t* size) {
  *size = 0;
  if (!location_) return remote_result(RemoteStatus::rejected, setup_error_);
  HttpExchange exchange{HttpMethod::head, object_url(key), {}, 0};
  RemoteResult checked = this->exchange(exchange);
  *size = exchange.length < 0 ? 0 : static_cast<std::uint64_t>(exchange.length);
  return checked;
}

RemoteResult S3Remote::list_page(const std::string& prefix, const std::string& token, std::size_t max_keys,
                                 std::size_t max_bytes, HttpExchange* page) {
  if (!location_) return remote_result(RemoteStatus::rejected, setup_error_);
  // Encoded and sorted by name as SigV4 signs it: libcurl 7.88 signs the query as it is sent.
  std::string query = token.empty() ? "" : "continuation-token=" + encode_url_query_value(token) + "&";
  query += "list-type=2&max-keys=" + std::to_string(max_keys) + "&prefix=" + encode_url_query_value(prefix);
  *page = HttpExchange{HttpMethod::get, location_->bucket_url + (location_->path_style ? "" : "/") + "?" + query, {},
                       max_bytes};
  return exchange(*page);
}

RemoteResult S3Remote::load(const Digest128& key) {
  RemoteResult fetched = get(record_key(key), config_.max_reply_bytes);
  const std::string hex = key.hex();
  {
    std::lock_guard lock(state_->replaceable_mutex);
    if (fetched.status == RemoteStatus::ok) {
      if (state_->replaceable.size() >= kMaxReplaceableKeys) state_->replaceable.clear();
      state_->replaceable.insert(hex);
    } else if (fetched.status == RemoteStatus::miss) {
      state_->replaceable.erase(hex);
    }
  }
  if (fetched.status != RemoteStatus::ok) return fetched;
  return checked_record(key, fetched.binary, config_.hmac_key);
}

RemoteResult S3Remote::save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) {
  bool replace = false;
  {
    std::lock_guard lock(state_->replaceable_mutex);
    replace = state_->replaceable.erase(key.hex()) > 0;
  }
  // A key seen missing is created only if still absent (two builders: the first record stays); a
  // record that was there (served and then rejected by the driver, corrupt, forged) is replaced.
  return put(record_key(key), encode_record(key, binary, sidecar, config_.hmac_key), !replace);
}

RemoteResult S3Remote::acquire_lease(const Digest128&, const std::string&) { return remote_result(RemoteStatus::ok); }
RemoteResult S3Remote::lease_exists(const Digest128&) { return remote_result(RemoteStatus::miss); }
RemoteResult S3Remote::release_lease(const Digest128&, const std::string&) { return remote_result(RemoteStatus::ok); }

RemoteResult S3Remote::publish_inputs(const Digest128& digest, std::string_view record, bool* sent) {
  const std::string key = inputs_key(digest);
  return publish_inputs_unless_there(
      digest, record, config_.hmac_key, [&](std::uint64_t* size) { return head(key, size); },
      [&](const std::string& value) { return put(key, value, false); }, sent);
}

RemoteResult S3Remote::publish_program(const Digest128& key, const nlohmann::json& summary) {
  std::string value;
  if (RemoteResult framed = encode_program_blob(key, summary, config_.hmac_key, &value); framed.status != RemoteStatus::ok) {
    return framed;
  }
  return put(program_key(key), value, false);
}

RemoteResult S3Remote::list_programs(RemoteListing* listing) {
  const std::string folder = key_prefix_ + "/program/";
  std::string token;
  std::uint64_t read = 0;
  for (std::size_t call = 0; call < kMaxProgramListingCalls; ++call) {
    HttpExchange page{HttpMethod::get, {}, {}, 0};
    RemoteResult listed = list_page(folder, token, 1000, kMaxListPageBytes, &page);
    if (listed.status == RemoteStatus::miss) {  // a server that answers 404 for an empty listing
      listing->complete = true;
      return remote_result(RemoteStatus::ok);
    }
    if (listed.status != RemoteStatus::ok) return listed;
    read += page.body.size();
    const S3ListPage names = parse_s3_list_page(page.body);
    for (const std::string& name : names.keys) {
      if (!name.starts_with(folder)) continue;
      const std::string hex = name.substr(folder.size());
      std::optional<Digest128> key = hex.size() == 32 ? Digest128::from_hex(hex) : std::nullopt;
      if (!key || key->hex() != hex) continue;  // not ours
      RemoteResult got = get(name, kMaxProgramSummaryBytes + kBlobOverhead);
      if (got.status == RemoteStatus::miss) continue;  // gone since the listing
      if (got.status != RemoteStatus::ok) return got;
      add_program_summary(name, *key, got.binary, config_.hmac_key, listing);
    }
    if (!names.truncated) {
      listing->complete = true;
      return remote_result(RemoteStatus::ok);
    }
    if (names.next_token.empty() || names.next_token == token) {
      return remote_result(RemoteStatus::error, "a truncated listing of " + folder + " without a new continuation token");
    }
    if (read > kMaxListingBytes) break;  // incomplete: warm says so
    token = names.next_token;
  }
  return remote_result(RemoteStatus::ok);  // listing->complete stays false: warm says the walk stopped

}

RemoteResult S3Remote::fetch_inputs(const Digest128& digest) {
  RemoteResult got = get(inputs_key(digest), kMaxRemoteInputsBytes + kBlobOverhead);
  if (got.status != RemoteStatus::ok) return got;
  return check_inputs_blob(digest, got.binary, config_.hmac_key);
}

std::vector<RemoteFinding> S3Remote::check(bool /*read_only*/) {
  std::vector<RemoteFinding> findings;
  if (!setup_error_.empty()) return findings;  // the probe failed with it already
  findings.push_back({"credentials", "info", "from " + credentials_->source +
                                                 (credentials_->session_token.empty() ? "" : " (with a session token)"),
                      ""});
  HttpExchange page{HttpMethod::get, {}, {}, 0};
  RemoteResult listed = list_page(key_prefix_ + "/program/", "", 1, 1u << 20, &page);
  if (listed.status == RemoteStatus::ok) {
    findings.push_back({"listing", "ok", "ListObjectsV2 answers (jitcache warm can list programs)", ""});
  } else {
    findings.push_back({"listing", "warn", std::string("ListObjectsV2: ") + to_string(listed.status) + ": " + listed.reason,
                        "grant s3:ListBucket on the bucket: warm lists with it, and without it a missing object is "
                        "answered 403 (docs/remote.md, S3 remotes)"});
  }
  const time_t server = page.date.empty() ? -1 : curl_getdate(page.date.c_str(), nullptr);
  if (server < 0) {
    findings.push_back({"clock", "info", "the server sent no Date header to compare the clock with", ""});
  } else {
    const std::int64_t skew = static_cast<std::int64_t>(std::time(nullptr)) - static_cast<std::int64_t>(server);
    const bool off = skew > kClockSkewWarnS || skew < -kClockSkewWarnS;
    findings.push_back({"clock", off ? "warn" : "ok",
                        "this host's clock is " + std::to_string(skew < 0 ? -skew : skew) + " s " +
                            (skew < 0 ? "behind" : "ahead of") + " the server's" +
                            (off ? ": S3 refuses signatures 15 minutes off" : ""),
                        off ? "synchronize the clock (NTP)" : ""});
  }
  for (RemoteFinding& finding : signing_findings(config_)) findings.push_back(std::move(finding));
  return findings;
}

}  // namespace jitcache

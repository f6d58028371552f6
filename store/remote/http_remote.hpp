// The HTTP(S) remote: framed records (store/remote/remote_record.hpp, HMAC included) as files on any
// server that answers GET, PUT and HEAD, e.g. nginx with WebDAV PUT or a ccache HTTP cache
// (docs/remote.md, "HTTP(S) remotes"). Below the URL's path, ccache's "subdirs" layout:
//
//   <ns>/<2 hex>/<30 hex>     the entry record of key <32 hex>
//   <ns>/inputs/<32 hex>      an input record ("JCI1" blob, store/remote/remote_programs.hpp)
//   <ns>/program/<32 hex>     a program summary ("JCP1" blob)
//
// <ns> is the record namespace with ':' as '/' ("jitcache", "jitcache/hmac-<16 hex>").
// libcurl (libjitcache-tiers.so only), every call bounded like the Redis client's (store/remote/remote_gate.hpp):
// one total deadline, the reply capped (a lying Content-Length or an endless chunked body is cut
// off), no redirect followed, only http and https, any status but 200 / 404 (201 / 204 for PUT)
// an error, 401 / 403 a refusal that turns the remote off. HTTP has no atomic create, so no
// leases: two hosts may build the same key at once, and the last PUT wins (both are valid).
#pragma once

#include <memory>
#include <string>

#include "store/remote/curl_transport.hpp"
#include "store/remote/http_scheme.hpp"
#include "store/remote/remote_programs.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class HttpRemote final : public RemoteClient {
 public:
  using Endpoint = HttpEndpoint;  // what its scheme reads from a URL

  HttpRemote(HttpEndpoint endpoint, RemoteConfig config);
  ~HttpRemote() override;

  RemoteResult load(const Digest128& key) override;
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) override;
  RemoteResult acquire_lease(const Digest128& key, const std::string& token) override;
  RemoteResult lease_exists(const Digest128& key) override;
  RemoteResult release_lease(const Digest128& key, const std::string& token) override;
  RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) override;
  RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) override;
  std::string describe() const override;
  std::vector<RemoteFinding> check(bool read_only) override;

  // For `jitcache warm` (store/remote/remote_programs.hpp's meanings). The program summaries are found
  // by listing <ns>/program/, which a plain HTTP server cannot do: nginx's autoindex in JSON
  // (docs/remote.md shows the location) answers it; without it, warm sees no program here.
  RemoteResult list_programs(RemoteListing* listing) override;
  RemoteResult fetch_inputs(const Digest128& digest) override;

  // Paths below the URL (without a leading '/'), as the layout above.
  std::string record_path(const Digest128& key) const;
  std::string inputs_path(const Digest128& digest) const;
  std::string program_path(const Digest128& key) const;

  // One bounded GET of `path`: ok with the body in `binary` (at most `max_bytes`, else error), miss on 404.
  RemoteResult get(const std::string& path, std::size_t max_bytes);
  RemoteResult put(const std::string& path, std::string_view body);
  // ok with the announced length in *size, or miss.
  RemoteResult head(const std::string& path, std::uint64_t* size);

 private:
  struct State;
  // Runs one request through the gate (bounds, back-off) on this client's connection.
  RemoteResult exchange(HttpExchange& request);
  HttpEndpoint endpoint_;
  RemoteConfig config_;
  std::string namespace_path_;
  std::unique_ptr<State> state_;
};

}  // namespace jitcache

// The S3 remote (docs/remote.md, "S3 remotes"): framed records (store/remote/remote_record.hpp,
// HMAC included) as objects of a bucket on AWS S3 or any S3-compatible server (MinIO, Garage,
// Ceph RGW). Below the URL's prefix, the HTTP remote's layout:
//
//   <ns>/<2 hex>/<30 hex>     the entry record of key <32 hex>
//   <ns>/inputs/<32 hex>      an input record ("JCI1" blob, store/remote/remote_programs.hpp)
//   <ns>/program/<32 hex>     a program summary ("JCP1" blob), listed with ListObjectsV2 by warm
//
// Requests are signed with AWS Signature V4 by libcurl (CURLOPT_AWS_SIGV4) and bounded like every
// HTTP request (store/remote/curl_transport.hpp). A record is created with `If-None-Match: *`
// (412: another writer stored it first, which is as good); a key this client found corrupt or
// served is replaced unconditionally. S3 has no lease a server without conditional writes
// honours, so no leases: as over HTTP, two hosts may build the same key at once.
#pragma once

#include <memory>
#include <string>

#include "store/remote/curl_transport.hpp"
#include "store/remote/s3_credentials.hpp"
#include "store/remote/s3_scheme.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class S3Remote final : public RemoteClient {
 public:
  using Endpoint = S3Endpoint;

  S3Remote(S3Endpoint endpoint, RemoteConfig config);
  ~S3Remote() override;

  RemoteResult load(const Digest128& key) override;
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) override;
  RemoteResult acquire_lease(const Digest128& key, const std::string& token) override;
  RemoteResult lease_exists(const Digest128& key) override;
  RemoteResult release_lease(const Digest128& key, const std::string& token) override;
  RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) override;
  RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) override;
  RemoteResult list_programs(RemoteListing* listing) override;
  RemoteResult fetch_inputs(const Digest128& digest) override;
  std::string describe() const override;
  // The bucket listable with these credentials (warm needs it, and a key without s3:ListBucket
  // is answered 403 for a missing object), the clock against the server's, and signing.
  std::vector<RemoteFinding> check(bool read_only) override;

  // Object keys in the bucket, as the layout above.
  std::string record_key(const Digest128& key) const;
  std::string inputs_key(const Digest128& digest) const;
  std::string program_key(const Digest128& key) const;

  // One bounded GET of an object: ok with the body in `binary` (at most `max_bytes`), miss on 404.
  RemoteResult get(const std::string& key, std::size_t max_bytes);
  // PUT of an object; `create_only` sends If-None-Match: * (412 = someone stored it first: ok).
  RemoteResult put(const std::string& key, std::string_view body, bool create_only);
  RemoteResult head(const std::string& key, std::uint64_t* size);

 private:
  struct State;
  // Signs and runs one request (skipped with the reason when the settings or credentials are bad).
  RemoteResult exchange(HttpExchange& request);
  std::string object_url(const std::string& key) const;
  // One ListObjectsV2 page of `prefix` (`token`: where the last page ended).
  RemoteResult list_page(const std::string& prefix, const std::string& token, std::size_t max_keys,
                         std::size_t max_bytes, HttpExchange* page);

  S3Endpoint endpoint_;
  RemoteConfig config_;
  std::optional<S3Location> location_;
  std::optional<S3Credentials> credentials_;
  std::string setup_error_;  // why the settings or credentials cannot be used ("" when they can)
  std::string key_prefix_;   // "<prefix>/<ns>" as sent
  std::unique_ptr<State> state_;
};

// The <Key> values and the continuation token of one ListObjectsV2 reply (at most what fits the
// reply's bytes; anything malformed ends the page's parse with what was read before it).
struct S3ListPage {
  std::vector<std::string> keys;
  bool truncated = false;
  std::string next_token;
};
S3ListPage parse_s3_list_page(std::string_view xml);

// The text of the first <tag>...</tag> of an S3 XML reply ("" when none), entities decoded.
std::string s3_xml_element(std::string_view xml, std::string_view tag);

}  // namespace jitcache

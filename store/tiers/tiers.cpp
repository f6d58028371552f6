#include "store/tiers/tiers.hpp"

#include "store/pack/pack_set.hpp"
#include "store/remote/file_remote.hpp"
#include "store/remote/http_remote.hpp"
#include "store/remote/remote_programs.hpp"

namespace jitcache {
namespace {

class RedisClient final : public RemoteClient {
 public:
  explicit RedisClient(RemoteConfig config) : store_(std::move(config)) {}
  RemoteResult load(const Digest128& key) override { return store_.load(key); }
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) override {
    return store_.save(key, binary, sidecar);
  }
  RemoteResult acquire_lease(const Digest128& key, const std::string& token) override {
    return store_.acquire_lease(key, token);
  }
  RemoteResult lease_exists(const Digest128& key) override { return store_.lease_exists(key); }
  RemoteResult release_lease(const Digest128& key, const std::string& token) override {
    return store_.release_lease(key, token);
  }
  RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) override {
    return jitcache::publish_inputs(store_, digest, record, sent);
  }
  RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) override {
    return jitcache::publish_program(store_, key, summary);
  }
  RemoteResult list_programs(RemoteListing* listing) override {
    return jitcache::list_programs(store_, kMaxProgramListingCalls, listing);
  }
  RemoteResult fetch_inputs(const Digest128& digest) override { return jitcache::fetch_inputs(store_, digest); }
  std::string describe() const override { return store_.config().endpoint.redacted(); }

 private:
  RedisRemote store_;
};

std::unique_ptr<PackTier> open_packs(std::string_view spec, std::string_view key_files,
                                     std::vector<std::string>* warnings) {
  const PackTrust trust = load_pack_trust(key_files, warnings);
  return PackSet::open(spec, trust, warnings);
}

std::unique_ptr<RemoteClient> open_remote(RemoteConfig config) {
#ifndef _WIN32  // no libcurl, no POSIX there: the Redis client's stub refuses every remote alike
  if (config.endpoint.kind == RemoteEndpoint::Kind::http) return std::make_unique<HttpRemote>(std::move(config));
  if (config.endpoint.kind == RemoteEndpoint::Kind::file) return std::make_unique<FileRemote>(std::move(config));
#endif
  return std::make_unique<RedisClient>(std::move(config));
}

}  // namespace

const TierFactory& linked_tiers() {
  static const TierFactory factory{kTierAbi, kTierLayout, open_packs, open_remote};
  return factory;
}

}  // namespace jitcache

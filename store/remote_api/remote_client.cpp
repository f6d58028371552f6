// The parts of the remote tier that need no connection, no hiredis and no libcrypto: the shim's
// engine links them (core/remote_tier.cpp) while the client itself lives in libjitcache-tiers.so
// (store/tiers/tiers.hpp).
#include <chrono>
#include <random>

#include "hashing/bounded_json.hpp"
#include "store/files/file_ops.hpp"
#include "store/remote_api/program_summary.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

const char* to_string(RemoteStatus status) {
  switch (status) {
    case RemoteStatus::ok: return "ok";
    case RemoteStatus::miss: return "miss";
    case RemoteStatus::corrupt: return "corrupt";
    case RemoteStatus::bad_hmac: return "bad_hmac";
    case RemoteStatus::timeout: return "timeout";
    case RemoteStatus::error: return "error";
    case RemoteStatus::rejected: return "rejected";
    case RemoteStatus::skipped: return "skipped";
  }
  return "?";
}

RemoteResult remote_result(RemoteStatus status, std::string reason) {
  RemoteResult r;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

const std::string& RemoteConfig::scheme_setting(std::string_view key) const {
  static const std::string kUnset;
  auto it = scheme_settings.find(key);
  return it == scheme_settings.end() ? kUnset : it->second;
}

std::unique_ptr<RemoteClient> open_remote(RemoteConfig config) {
  const std::shared_ptr<const RemoteEndpoint> endpoint = config.endpoint;
  return endpoint->open(std::move(config));
}

std::vector<RemoteFinding> signing_findings(const RemoteConfig& config) {
  if (!config.hmac_key.empty()) return {};
  return {{"signing", "warn", "records are not signed: whoever can write the server decides what binaries run here",
           "set the same JITCACHE_REMOTE_HMAC_KEY on every node (docs/remote.md, Trust model)"}};
}

std::string new_lease_token() {
  std::random_device random;
  std::uniform_int_distribution<std::uint64_t> bits;
  std::mt19937_64 mix(random() ^ (fileops::current_process_id() << 32));
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return Digest128{bits(mix), bits(mix) ^ now}.hex();
}

std::optional<nlohmann::json> program_summary(const nlohmann::json& sidecar, std::int64_t published_s) {
  if (!sidecar.is_object() || string_member(sidecar, "inputs").empty()) return std::nullopt;
  nlohmann::json components = nlohmann::json::object();
  std::string device_digest;
  if (auto all = sidecar.find("components"); all != sidecar.end() && all->is_object()) {
    for (const auto& [name, component] : all->items()) {
      if (!component.is_object()) continue;
      std::string digest = string_member(component, "digest");
      if (digest.empty()) continue;
      components[name] = digest;
      if (name == "device") device_digest = digest;
    }
  }
  return nlohmann::json{{"schema", kProgramSummarySchema},
                        {"key", string_member(sidecar, "key")},
                        {"api", string_member(sidecar, "api")},
                        {"inputs", string_member(sidecar, "inputs")},
                        {"device", string_member(sidecar, "device")},
                        {"device_digest", device_digest},
                        {"created_by", string_member(sidecar, "created_by")},
                        {"published", published_s},
                        {"components", std::move(components)}};
}

}  // namespace jitcache

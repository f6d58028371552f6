#include "store/remote/remote_survey.hpp"

#include <vector>

namespace jitcache {
namespace {

constexpr std::size_t kKeyHex = 32;  // Digest128::hex()
constexpr std::size_t kTagHex = 16;  // the namespace's name of an HMAC key

bool all_hex(std::string_view text) {
  return text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// "<namespace>:<32 hex>" -> the key, else nothing (leases, other names).
std::optional<Digest128> record_key(std::string_view name, std::string_view space) {
  if (name.size() != space.size() + 1 + kKeyHex || !name.starts_with(space) || name[space.size()] != ':') {
    return std::nullopt;
  }
  std::string_view key = name.substr(space.size() + 1);
  return all_hex(key) ? Digest128::from_hex(key) : std::nullopt;
}

// The namespace of a signed record, "<prefix>:hmac-<16 hex>", or empty.
std::string signed_namespace(std::string_view name, const std::string& prefix) {
  const std::string start = prefix + ":hmac-";
  if (!name.starts_with(start) || name.size() != start.size() + kTagHex + 1 + kKeyHex) return {};
  std::string space(name.substr(0, start.size() + kTagHex));
  if (!all_hex(space.substr(start.size())) || !record_key(name, space)) return {};
  return space;
}

void classify(const std::string& name, const RedisRemote& store, RemoteSurvey* survey) {
  const std::string& prefix = store.config().prefix;
  ++survey->names_seen;
  if (record_key(name, prefix)) {
    ++survey->unsigned_records;
    return;
  }
  const std::string space = signed_namespace(name, prefix);
  if (space.empty()) return;  // a lease, or not ours
  if (space == store.record_namespace()) {
    ++survey->own_records;
    if (!survey->own_sample) survey->own_sample = record_key(name, space);
  } else {
    ++survey->other_records;
    survey->other_namespaces.insert(space);
  }
}

}  // namespace

RemoteResult survey_remote(RedisRemote& store, std::size_t max_calls, RemoteSurvey* survey) {
  std::string cursor = "0";
  for (std::size_t call = 0; call < max_calls; ++call) {
    std::vector<std::string> names;
    std::string next;
    RemoteResult step = store.scan_names(cursor, &names, &next);
    if (step.status != RemoteStatus::ok) return step;
    for (const std::string& name : names) classify(name, store, survey);
    if (next == "0") {
      survey->complete = true;
      break;
    }
    cursor = next;
  }
  return remote_result(RemoteStatus::ok);
}

}  // namespace jitcache

#include "store/remote/remote_programs.hpp"

#include "hashing/bounded_json.hpp"
#include "hashing/recorded_inputs.hpp"
#include "store/remote/redis_connection.hpp"
#include "store/remote/remote_framing.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kInputsMagic = "JCI1";
constexpr std::string_view kProgramMagic = "JCP1";
constexpr std::size_t kMaxComponents = 64;

RemoteStatus status_of(RecordCheck check) {
  return check == RecordCheck::bad_hmac ? RemoteStatus::bad_hmac : RemoteStatus::corrupt;
}

bool is_digest(const nlohmann::json& value) {
  return value.is_string() && Digest128::from_hex(value.get_ref<const std::string&>()).has_value() &&
         value.get_ref<const std::string&>().size() == 32;
}

bool is_text(const nlohmann::json& value, std::size_t longest) {
  return value.is_string() && value.get_ref<const std::string&>().size() <= longest;
}

// Why `summary` (read from <ns>:program:<key>) is not one program_summary() wrote for `key`.
std::string summary_problem(const nlohmann::json& summary, const Digest128& key) {
  if (!summary.is_object()) return "not a JSON object";
  if (summary.value("schema", 0) != kProgramSummarySchema) return "summary of an unknown schema";
  if (string_member(summary, "key") != key.hex()) return "summary of another key";
  if (!is_digest(summary.value("inputs", nlohmann::json()))) return "no input record digest";
  if (!is_digest(summary.value("device_digest", nlohmann::json()))) return "no device digest";
  for (const char* name : {"api", "device", "created_by"}) {
    if (!is_text(summary.value(name, nlohmann::json()), 4096)) return std::string("no well-formed ") + name;
  }
  const nlohmann::json& published = summary.value("published", nlohmann::json());
  // Seconds since 1970, up to the year 2514: a later time would overflow a count of nanoseconds.
  if (!published.is_number_integer() || published.get<std::int64_t>() < 0 || published.get<std::int64_t>() > (1ll << 34)) {
    return "no well-formed publication time";
  }
  const nlohmann::json& components = summary.value("components", nlohmann::json());
  if (!components.is_object() || components.size() > kMaxComponents) return "no well-formed components";
  for (const auto& [name, digest] : components.items()) {
    // Names become arguments of the replay child: plain words only.
    if (name.empty() || name.size() > 64 || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos ||
        !is_digest(digest)) {
      return "no well-formed components";
    }
  }
  return {};
}

}  // namespace

std::string inputs_name(const RedisRemote& store, const Digest128& digest) {
  return store.record_namespace() + ":inputs:" + digest.hex();
}

std::string program_name(const RedisRemote& store, const Digest128& key) {
  return store.record_namespace() + ":program:" + key.hex();
}

std::string encode_inputs_blob(const Digest128& digest, std::string_view record, std::string_view hmac_key) {
  return remote_framing::encode_blob(kInputsMagic, digest, record, hmac_key);
}

RemoteResult encode_program_blob(const Digest128& key, const nlohmann::json& summary, std::string_view hmac_key,
                                 std::string* value) {
  const std::string payload = summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (payload.size() > kMaxProgramSummaryBytes) return remote_result(RemoteStatus::skipped, "program summary over the cap");
  *value = remote_framing::encode_blob(kProgramMagic, key, payload, hmac_key);
  return remote_result(RemoteStatus::ok);
}

RemoteResult publish_inputs(RedisRemote& store, const Digest128& digest, std::string_view record, bool* sent) {
  *sent = false;
  if (record.size() > kMaxRemoteInputsBytes) {
    return remote_result(RemoteStatus::skipped, "input record of " + std::to_string(record.size()) + " bytes is over the cap");
  }
  const std::string name = inputs_name(store, digest);
  const std::string value = encode_inputs_blob(digest, record, store.config().hmac_key);
  bool there = false;
  RemoteResult checked = store.command({"STRLEN", name}, [&](const RedisReply& reply) {
    there = reply.integer() == static_cast<long long>(value.size());
    return remote_result(RemoteStatus::ok);
  });
  if (checked.status != RemoteStatus::ok || there) return checked;
  RemoteResult stored = store.command({"SET", name, value}, [](const RedisReply&) { return remote_result(RemoteStatus::ok); });
  *sent = stored.status == RemoteStatus::ok;
  return stored;
}

RemoteResult publish_program(RedisRemote& store, const Digest128& key, const nlohmann::json& summary) {
  std::string value;
  if (RemoteResult framed = encode_program_blob(key, summary, store.config().hmac_key, &value);
      framed.status != RemoteStatus::ok) {
    return framed;
  }
  return store.command({"SET", program_name(store, key), value}, [](const RedisReply&) { return remote_result(RemoteStatus::ok); });
}

void add_program_summary(const std::string& name, const Digest128& key, std::string_view value,
                         std::string_view hmac_key, RemoteListing* listing) {
  remote_framing::DecodedBlob blob = remote_framing::decode_blob(kProgramMagic, key, value, kMaxProgramSummaryBytes, hmac_key);
  if (blob.check != RecordCheck::ok) {
    listing->refused.push_back({name, std::string(to_string(blob.check)) + ": " + blob.reason});
    return;
  }
  nlohmann::json summary = parse_untrusted_json(blob.payload);
  if (std::string problem = summary_problem(summary, key); !problem.empty()) {
    listing->refused.push_back({name, "corrupt: " + problem});
    return;
  }
  listing->programs.push_back({key, std::move(summary)});
}

RemoteResult list_programs(RedisRemote& store, std::size_t max_calls, RemoteListing* listing) {
  const std::string under = store.record_namespace() + ":program:";
  std::vector<std::string> names;
  std::string cursor = "0";
  for (std::size_t call = 0; call < max_calls; ++call) {
    std::vector<std::string> step;
    std::string next;
    RemoteResult scanned = store.scan_names(cursor, &step, &next, under);
    if (scanned.status != RemoteStatus::ok) return scanned;
    names.insert(names.end(), step.begin(), step.end());
    if (next == "0") {
      listing->complete = true;
      break;
    }
    cursor = next;
  }
  for (const std::string& name : names) {
    std::optional<Digest128> key;
    if (name.size() == under.size() + 32 && name.starts_with(under)) key = Digest128::from_hex(name.substr(under.size()));
    if (!key) {
      listing->refused.push_back({name, "not a program summary's name"});
      continue;
    }
    std::string value;
    bool absent = false;
    RemoteResult got = store.command({"GETRANGE", name, "0", std::to_string(kMaxProgramSummaryBytes + kBlobOverhead)},
                                     [&](const RedisReply& reply) {
                                       value = std::string(reply.text());
                                       absent = value.empty();  // gone since the SCAN (evicted)
                                       return remote_result(RemoteStatus::ok);
                                     });
    if (got.status != RemoteStatus::ok) return got;
    if (absent) continue;
    add_program_summary(name, *key, value, store.config().hmac_key, listing);
  }
  return remote_result(RemoteStatus::ok);
}

RemoteResult fetch_inputs(RedisRemote& store, const Digest128& digest) {
  std::string value;
  // One byte past the largest valid value: more than that is refused without reading the rest.
  const std::uint64_t longest = kMaxRemoteInputsBytes + kBlobOverhead;
  RemoteResult got = store.command({"GETRANGE", inputs_name(store, digest), "0", std::to_string(longest)},
                                   [&](const RedisReply& reply) {
                                     value = std::string(reply.text());
                                     return remote_result(value.empty() ? RemoteStatus::miss : RemoteStatus::ok);
                                   });
  if (got.status != RemoteStatus::ok) return got;
  return check_inputs_blob(digest, value, store.config().hmac_key);
}

RemoteResult check_inputs_blob(const Digest128& digest, std::string_view value, std::string_view hmac_key) {
  if (value.size() > kMaxRemoteInputsBytes + kBlobOverhead) {
    return remote_result(RemoteStatus::corrupt, "larger than the " + std::to_string(kMaxRemoteInputsBytes) + "-byte cap");
  }
  remote_framing::DecodedBlob blob = remote_framing::decode_blob(kInputsMagic, digest, value, kMaxRemoteInputsBytes, hmac_key);
  if (blob.check != RecordCheck::ok) return remote_result(status_of(blob.check), blob.reason);
  if (xxh3_128(blob.payload) != digest) return remote_result(RemoteStatus::corrupt, "its bytes do not hash to its name");
  std::string why;
  if (!decode_recorded_inputs(blob.payload, &why)) return remote_result(RemoteStatus::corrupt, "not an input record: " + why);
  RemoteResult fetched = remote_result(RemoteStatus::ok);
  fetched.binary = std::move(blob.payload);
  return fetched;
}

RemoteResult RedisRemote::publish_inputs(const Digest128& digest, std::string_view record, bool* sent) {
  return jitcache::publish_inputs(*this, digest, record, sent);
}

RemoteResult RedisRemote::publish_program(const Digest128& key, const nlohmann::json& summary) {
  return jitcache::publish_program(*this, key, summary);
}

RemoteResult RedisRemote::list_programs(RemoteListing* listing) {
  return jitcache::list_programs(*this, kMaxProgramListingCalls, listing);
}

RemoteResult RedisRemote::fetch_inputs(const Digest128& digest) { return jitcache::fetch_inputs(*this, digest); }

RemoteResult publish_inputs_unless_there(const Digest128& digest, std::string_view record, std::string_view hmac_key,
                                         const std::function<RemoteResult(std::uint64_t* size)>& head,
                                         const std::function<RemoteResult(const std::string& value)>& put, bool* sent) {
  *sent = false;
  if (record.size() > kMaxRemoteInputsBytes) {
    return remote_result(RemoteStatus::skipped, "input record of " + std::to_string(record.size()) + " bytes is over the cap");
  }
  const std::string value = encode_inputs_blob(digest, record, hmac_key);
  std::uint64_t size = 0;
  RemoteResult checked = head(&size);
  if (checked.failed() || checked.status == RemoteStatus::skipped) return checked;
  if (checked.status == RemoteStatus::ok && size == value.size()) return checked;
  RemoteResult stored = put(value);
  *sent = stored.status == RemoteStatus::ok;
  return stored;
}

}  // namespace jitcache

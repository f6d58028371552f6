// RedisRemote::check, doctor's look at a Redis remote: "HMAC on both ends". Signed and unsigned
// records live in separate namespaces (docs/remote.md, Trust model), so nodes that differ in
// JITCACHE_REMOTE_HMAC_KEY share nothing; what the server holds tells whether the other nodes sign
// as this one does.
#include "store/remote/redis_remote.hpp"
#include "store/remote/remote_survey.hpp"

namespace jitcache {

std::vector<RemoteFinding> RedisRemote::check(bool /*read_only*/) {
  constexpr std::size_t kMaxScanCalls = 100;  // about 100000 key names: enough to see each kind
  std::vector<RemoteFinding> out;
  const bool signs = !config_.hmac_key.empty();
  const std::string same_key = "set the same JITCACHE_REMOTE_HMAC_KEY on every node that shares this server "
                               "(docs/remote.md, Trust model)";
  RemoteSurvey survey;
  RemoteResult walked = survey_remote(*this, kMaxScanCalls, &survey);
  if (walked.status != RemoteStatus::ok) {
    out.push_back({"signing", "warn", "could not list the server's records: " + walked.reason,
                   "check that the Redis user may run SCAN"});
    return out;  // what was seen before the failure is no verdict
  }
  auto keys = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " other key" : " other keys"); };
  std::string seen = std::to_string(survey.unsigned_records) + " unsigned, " +
                     (signs ? std::to_string(survey.own_records) + " signed with this key, " : "") +
                     std::to_string(survey.other_records) + " signed with " + keys(survey.other_namespaces.size());
  if (!survey.complete) seen += ", among the first " + std::to_string(survey.names_seen) + " names";
  const std::size_t others = signs ? survey.unsigned_records + survey.other_records : survey.own_records + survey.other_records;
  const std::size_t ours = signs ? survey.own_records : survey.unsigned_records;
  if (!signs) {
    // Without a key this node reads and writes the unsigned records only.
    if (others > 0) {
      out.push_back({"signing", ours > 0 ? "warn" : "fail",
                     "this node does not sign, but the server holds records signed by other nodes: it never sees "
                     "them (records: " + seen + ")",
                     same_key});
    } else {
      out.push_back({"signing", "warn",
                     "records are not signed: whoever can write the server decides what binaries run here (records: " +
                         seen + ")",
                     "set the same JITCACHE_REMOTE_HMAC_KEY on every node (docs/remote.md, Trust model)"});
    }
    return out;
  }
  if (others > 0) {
    const std::string who = survey.unsigned_records > 0 && survey.other_records > 0
                                ? "nodes without a key and nodes with another key"
                                : survey.unsigned_records > 0 ? "nodes without a key" : "nodes with another key";
    out.push_back({"signing", ours > 0 ? "warn" : "fail",
                   "this node signs, but the server also holds records of " + who +
                       ": they and this node never share a build (records: " + seen + ")",
                   same_key + "; during a key rotation this is expected"});
  } else {
    out.push_back({"signing", "ok", "records are signed and verified (records: " + seen + ")", ""});
  }
  // One record this node would read, verified as a lookup would: a forged or damaged one shows here.
  if (survey.own_sample) {
    RemoteResult sample = load(*survey.own_sample);
    if (sample.status == RemoteStatus::bad_hmac || sample.status == RemoteStatus::corrupt) {
      out.push_back({"record", "fail",
                     record_name(*survey.own_sample) + ": " + to_string(sample.status) + ": " + sample.reason,
                     "someone writes this namespace without the key, or the key differs between nodes: "
                     "compare JITCACHE_REMOTE_HMAC_KEY, and restrict who can write the server"});
    } else if (sample.status == RemoteStatus::ok) {
      out.push_back({"record", "ok", "a signed record read back and verified with this key", ""});
    }
  }
  return out;
}

}  // namespace jitcache

#include "core/remote_tier.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/clock.hpp"
#include "core/log.hpp"
#include "core/long_wait.hpp"
#include "core/lookup.hpp"
#include "core/stats.hpp"
#include "core/tier_source.hpp"
#include "store/files/file_ops.hpp"
#include "store/files/trusted_file.hpp"
#include "store/remote_api/program_summary.hpp"

namespace jitcache {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstPoll{10};
constexpr milliseconds kLongestPoll{100};
// A record holds a binary of at most max_entry_size and its sidecar.
constexpr std::size_t kRecordOverhead = 16u << 20;

const WaitNotice kLeaseWait{WaitKind::remote_lease, "another node building the same program (its remote lease)",
                            "JITCACHE_REMOTE_LEASE_WAIT"};

std::atomic<bool> g_warned_of_status[8];  // one warning per RemoteStatus per process
std::atomic<bool> g_write_skip_noted{false};  // a remote that takes no writes (read-only): one note
std::atomic<bool> g_notice_warned{false};     // RemoteResult::notice: one warning per process

}  // namespace

std::optional<std::string> trusted_remote_ca_file(const Settings& settings, std::string* why) {
  const std::string& given = settings.remote_ca_file;
  if (given.empty()) return std::string();
  std::string problem;
  std::optional<std::filesystem::path> resolved = resolve_trusted_file(given, &problem);
  if (!resolved) {
    *why = "JITCACHE_REMOTE_CA_FILE refused: " + problem;
    return std::nullopt;
  }
  return resolved->string();
}

std::string remote_configs_from(const Settings& settings, RemoteSchemes schemes, std::vector<RemoteConfig>* configs,
                                bool* read_only, milliseconds* lease_wait) {
  std::string error;
  std::optional<std::vector<std::shared_ptr<const RemoteEndpoint>>> endpoints =
      parse_remote_urls(schemes, settings.remote, &error);
  if (!endpoints) return "remote: " + error;
  RemoteConfig config;
  config.prefix = settings.remote_prefix.empty() ? "jitcache" : settings.remote_prefix;
  config.hmac_key = settings.remote_hmac_key;
  std::string ca_problem;
  const std::optional<std::string> ca_file = trusted_remote_ca_file(settings, &ca_problem);
  config.ca_file = ca_file.value_or(std::string());
  // The table bounds both timeouts (never 0, which a socket reads as "no bound").
  config.connect_timeout = milliseconds(settings.remote_connect_timeout_ms);
  config.command_timeout = milliseconds(settings.remote_timeout_ms);
  config.backoff = std::chrono::seconds(settings.remote_backoff_s);
  config.lease_ttl = std::chrono::seconds(settings.remote_lease_ttl_s);
  *lease_wait = std::chrono::seconds(settings.remote_lease_wait_s);
  *read_only = settings.remote_read_only;
  config.max_reply_bytes = static_cast<std::size_t>(
      std::min<std::uint64_t>(settings.max_entry_size, std::uint64_t{1} << 40) + kRecordOverhead);
  if (config.lease_ttl.count() == 0) config.lease_ttl = milliseconds(1000);
  for (std::size_t i = 0; i < endpoints->size(); ++i) {
    // The same remote twice would be asked twice per miss and backfilled from itself: once.
    const std::string name = (*endpoints)[i]->redacted();
    auto same = std::find_if(configs->begin(), configs->end(),
                             [&](const RemoteConfig& earlier) { return earlier.endpoint->redacted() == name; });
    if (same != configs->end()) {
      error += std::string(error.empty() ? "" : "; ") + "remote " + std::to_string(i + 1) + " (" + name +
               ") is listed before: asked once";
      continue;
    }
    // Another user's CA would let him answer at the remote's address: that remote is not asked.
    if (!ca_file && (*endpoints)[i]->trusts_ca_file()) {
      error += std::string(error.empty() ? "" : "; ") + "remote " + std::to_string(i + 1) + " (" + name +
               ") left out: " + ca_problem;
      continue;
    }
    // What only this remote's scheme reads (its row names them): no field every scheme carries.
    config.scheme_settings.clear();
    for (std::string_view key : (*endpoints)[i]->scheme->settings) {
      auto it = settings.raw.find(std::string(key));
      config.scheme_settings[std::string(key)] = it == settings.raw.end() ? std::string() : it->second.value;
    }
    config.endpoint = std::move((*endpoints)[i]);
    configs->push_back(config);
  }
  return error;
}

std::unique_ptr<RemoteTier> RemoteTier::open(const Settings& settings) {
  if (settings.remote.empty()) return nullptr;
  // The schemes come with their clients, from the tiers' library.
  std::string why;
  const TierFactory* tiers = tier_factory(&why);
  if (!tiers) {
    log_warning("running without the remote tier: " + why);
    return nullptr;
  }
  std::vector<RemoteConfig> configs;
  bool read_only = false;
  milliseconds lease_wait{0};
  std::string problem = remote_configs_from(settings, tiers->remote_schemes(), &configs, &read_only, &lease_wait);
  if (configs.empty()) {
    log_warning("running without the remote tier: " + problem);
    return nullptr;
  }
  if (!problem.empty()) log_warning("remote setting ignored: " + problem);  // fell back to its default
  std::vector<std::unique_ptr<RemoteClient>> remotes;
  std::string names;
  for (RemoteConfig& config : configs) {
    names += (names.empty() ? "" : " | ") + config.endpoint->redacted();
    remotes.push_back(open_remote(std::move(config)));
  }
  log_info("remote tier: " + names + (read_only ? " (read-only)" : ""));
  return std::make_unique<RemoteTier>(std::move(remotes), read_only, lease_wait,
                                      backfills(settings.remote_backfill, !settings.remote_hmac_key.empty()));
}

// A later remote's hit copied into an earlier one is trusted there by everyone who uses only that
// one: unsigned, it would launder a server they never chose into theirs. So by
// default only a record whose tag verified with the key every remote shares; `all` opts in.
bool RemoteTier::backfills(RemoteBackfill setting, bool signed_records) {
  switch (setting) {
    case RemoteBackfill::all: return true;
    case RemoteBackfill::off: return false;
    case RemoteBackfill::signed_records: break;
  }
  return signed_records;
}

RemoteTier::RemoteTier(std::vector<std::unique_ptr<RemoteClient>> remotes, bool read_only, milliseconds lease_wait,
                       bool backfill)
    : remotes_(std::move(remotes)), read_only_(read_only), backfill_(backfill), lease_wait_(lease_wait) {}

RemoteResult RemoteTier::load_in_order(const Digest128& key, bool note_rejects, std::size_t* served_by) {
  RemoteResult first;
  for (std::size_t i = 0; i < remotes_.size(); ++i) {
    RemoteResult loaded = remotes_[i]->load(key);
    if (loaded.status == RemoteStatus::ok) {
      if (i > 0 && first.status != RemoteStatus::miss) note(first, "read");  // the caller sees the hit only
      *served_by = i;
      return loaded;
    }
    if (i == 0) {
      first = std::move(loaded);
      continue;
    }
    const bool rejected = loaded.status == RemoteStatus::corrupt || loaded.status == RemoteStatus::bad_hmac;
    if (loaded.status != RemoteStatus::miss && (note_rejects || !rejected)) note(loaded, "read");
  }
  return first;
}

void RemoteTier::note(const RemoteResult& result, const char* during) {
  if (!result.notice.empty() && !g_notice_warned.exchange(true)) log_warning("remote: " + result.notice);
  const char* name = nullptr;
  switch (result.status) {
    case RemoteStatus::ok:
    case RemoteStatus::miss: return;
    case RemoteStatus::corrupt: name = counter::remote_corrupt; break;
    case RemoteStatus::bad_hmac: name = counter::remote_hmac_reject; break;
    case RemoteStatus::timeout: name = counter::remote_timeout; break;
    case RemoteStatus::error:
    case RemoteStatus::rejected: name = counter::remote_error; break;
    case RemoteStatus::skipped: name = counter::remote_skipped; break;
  }
  count(name);
  std::string message = std::string("remote ") + during + ": " + to_string(result.status) + ": " + result.reason;
  if (result.status == RemoteStatus::skipped) {
    const bool first_write = std::string_view(during) == "write" && !g_write_skip_noted.exchange(true);
    if (first_write) log_info(message + " (noted once; not a failure)");
    else log_debug(message);
  } else if (g_warned_of_status[static_cast<int>(result.status)].exchange(true)) {
    log_debug(message);
  } else {
    log_warning(message + (result.failed() ? " (remote skipped for the back-off period)" : ""));
  }
}

void RemoteTier::fetch(Lookup& lookup) {
  Stopwatch watch;
  const Digest128& key = lookup.key.key;
  auto deadline = std::chrono::steady_clock::now() + lease_wait_;
  milliseconds poll = kFirstPoll;
  std::string lease = "none";
  RemoteResult loaded;
  bool rejected_seen = false;
  const std::string token = new_lease_token();
  std::size_t served_by = 0;
  for (;;) {
    loaded = load_in_order(key, !rejected_seen, &served_by);
    if (loaded.status == RemoteStatus::corrupt || loaded.status == RemoteStatus::bad_hmac) {
      if (!rejected_seen) note(loaded, "read");  // once per lookup, though a waiter sees it on every poll
      rejected_seen = true;
    } else if (loaded.status != RemoteStatus::ok && loaded.status != RemoteStatus::miss) {
      note(loaded, "read");
      break;
    }
    if (loaded.status == RemoteStatus::ok) break;
    // Nobody has a usable record: build it here, or wait for the node that is building it.
    rejected_seen = true;  // later polls: the other remotes' refusals are noted already
    RemoteResult leased = read_only_ ? leader().lease_exists(key) : leader().acquire_lease(key, token);
    if (leased.status == RemoteStatus::ok && !leased.notice.empty()) note(leased, "lease");  // warned once
    if (!read_only_ && leased.status == RemoteStatus::ok) {
      // The previous holder may have published and released between our read and our lease.
      RemoteResult again = load_in_order(key, false, &served_by);
      if (again.status == RemoteStatus::ok) {
        leader().release_lease(key, token);
        loaded = std::move(again);
        break;
      }
      std::lock_guard guard(leases_mutex_);
      leases_[key.hex()] = token;
      lease = "acquired";
      break;
    }
    bool held_elsewhere = read_only_ ? leased.status == RemoteStatus::ok : leased.status == RemoteStatus::miss;
    if (!held_elsewhere) {
      note(leased, "lease");
      break;
    }
    if (lease == "none") count(counter::remote_lease_wait);
    lease = "waited";
    if (watch.elapsed_us() >= static_cast<std::uint64_t>(kQuietWait.count()) * 1000) announce_wait(kLeaseWait, lease_wait_);
    if (std::chrono::steady_clock::now() + poll > deadline) {
      count(counter::remote_lease_timeout);
      lease = "wait_timed_out";
      log_warning("gave up waiting for another node's build of " + key.hex() + " after " +
                  std::to_string(lease_wait_.count()) + " ms (JITCACHE_REMOTE_LEASE_WAIT): building here");
      break;
    }
    std::this_thread::sleep_for(poll);
    poll = std::min(poll * 2, kLongestPoll);
  }

  if (loaded.status == RemoteStatus::ok) {
    lookup.hit_in(Tier::remote, std::move(loaded.binary), std::move(loaded.sidecar), nullptr);
  } else if (loaded.status == RemoteStatus::miss) {
    count(counter::remote_miss);
  }
  std::uint64_t elapsed_us = watch.elapsed_us();
  lookup.timings.lookup_us += elapsed_us;
  lookup.remote = {{"status", to_string(loaded.status)}, {"lease", lease}, {"us", elapsed_us}};
  if (!loaded.reason.empty()) lookup.remote["reason"] = loaded.reason;
  if (loaded.status == RemoteStatus::ok && remotes_.size() > 1) lookup.remote["remote"] = served_by;
}

std::string RemoteTier::take_lease_token(const Digest128& key) {
  std::lock_guard guard(leases_mutex_);
  auto it = leases_.find(key.hex());
  if (it == leases_.end()) return {};
  std::string token = std::move(it->second);
  leases_.erase(it);
  return token;
}

void RemoteTier::publish(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                         std::string_view inputs) {
  if (read_only_) return abandon(key);
  std::vector<RemoteClient*> stored;  // the remotes that hold the record now
  for (const std::unique_ptr<RemoteClient>& remote : remotes_) {
    RemoteResult saved = remote->save(key, binary, sidecar);
    if (saved.status == RemoteStatus::ok) stored.push_back(remote.get());
    note(saved, "write");
  }
  if (!stored.empty()) count(counter::remote_store);
  abandon(key);  // the record is there (or could not be written): the lease has done its job
  if (stored.empty() || inputs.empty()) return;
  // After the release: waiting nodes want the entry, not these.
  std::optional<nlohmann::json> summary = program_summary(sidecar, fileops::now_ns() / 1000000000);
  std::optional<Digest128> digest = Digest128::from_hex(sidecar.value("inputs", std::string()));
  if (!summary || !digest) return;
  if (inputs.size() > kMaxRemoteInputsBytes) {  // not a failure of the remote: nothing to count there
    log_info("input record of " + key.hex() + " not published: over the remote's 16 MiB cap");
    return;
  }
  for (RemoteClient* remote : stored) {
    bool sent = false;
    RemoteResult record = remote->publish_inputs(*digest, inputs, &sent);
    if (record.status != RemoteStatus::ok) {
      note(record, "input record write");
      continue;
    }
    count(sent ? counter::remote_inputs_sent : counter::remote_inputs_there);
    if (RemoteResult listed = remote->publish_program(key, *summary); listed.status != RemoteStatus::ok) {
      note(listed, "program summary write");
    }
  }
}

void RemoteTier::backfill(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar,
                          const nlohmann::json& remote) {
  const std::size_t served_by = remote.is_object() ? remote.value("remote", std::size_t{0}) : 0;
  if (read_only_ || !backfill_ || served_by == 0 || served_by >= remotes_.size()) return;
  for (std::size_t i = 0; i < served_by; ++i) {
    RemoteResult saved = remotes_[i]->save(key, binary, sidecar);
    if (saved.status == RemoteStatus::ok) count(counter::remote_backfill);
    else note(saved, "backfill write");
  }
}

bool RemoteTier::holds_lease(const Digest128& key) {
  std::lock_guard guard(leases_mutex_);
  return leases_.count(key.hex()) > 0;
}

void RemoteTier::abandon(const Digest128& key) {
  std::string token = take_lease_token(key);
  if (token.empty()) return;
  RemoteResult released = leader().release_lease(key, token);
  if (released.status != RemoteStatus::ok && released.status != RemoteStatus::miss) note(released, "lease release");
}

}  // namespace jitcache

#include "store/remote/file_remote.hpp"

#include <charconv>
#include <chrono>
#include <mutex>

#include "store/files/file_ops.hpp"
#include "store/local/entry_file.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/off_thread_call.hpp"
#include "store/remote/remote_gate.hpp"
#include "store/remote/remote_record.hpp"
#include "store/remote/signed_entry.hpp"

namespace jitcache {
namespace {

constexpr std::uint64_t kMaxLeaseBytes = 256;
constexpr std::size_t kMaxListedPrograms = 1u << 20;

std::int64_t now_ms() { return fileops::now_ns() / 1000000; }

struct Lease {
  std::string token;
  std::int64_t expires_ms = 0;
};

// Hosts' clocks differ a little; a lease is trusted no further than this past its TTL.
constexpr std::int64_t kClockSlackMs = 5000;

// What a signed lease's tag covers: the key too, so a lease is not moved to another key's name.
std::string lease_tag(const Digest128& key, std::string_view token, std::int64_t expires_ms,
                      std::string_view hmac_key) {
  return hmac_sha256_hex(hmac_key, "jclease1 " + key.hex() + " " + std::string(token) + " " + std::to_string(expires_ms));
}

// "<token> <expiry ms>", and " <tag>" when records are signed.
std::string lease_text(const Digest128& key, const std::string& token, std::int64_t expires_ms,
                       std::string_view hmac_key) {
  std::string text = token + " " + std::to_string(expires_ms);
  if (!hmac_key.empty()) text += " " + lease_tag(key, token, expires_ms, hmac_key);
  return text;
}

// nullopt for anything but lease_text's form: a lease being written, garbage, or (signed) one
// without a tag that verifies, which a user without the key may have planted.
std::optional<Lease> parse_lease(std::string_view text, const Digest128& key, std::string_view hmac_key) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  Lease lease{std::string(text.substr(0, space)), 0};
  std::string_view rest = text.substr(space + 1), tag;
  if (!hmac_key.empty()) {
    const std::size_t tag_space = rest.find(' ');
    if (tag_space == std::string_view::npos) return std::nullopt;
    tag = rest.substr(tag_space + 1);
    rest = rest.substr(0, tag_space);
  }
  auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), lease.expires_ms);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  if (!hmac_key.empty() && !tags_equal(tag, lease_tag(key, lease.token, lease.expires_ms, hmac_key))) return std::nullopt;
  return lease;
}

// Whether a lease file read back (its text, its mtime) holds the key now. A lease expires at most
// its TTL after it was taken, and a file being written is fresh: one that expires later, or an
// unreadable one from the future or older than the TTL, is garbage (planted, or a crashed writer's)
// and holds nothing (a planted lease expiring in 2100 stalled every user of the share). Signed,
// only a lease whose tag verifies holds: a file being written loses at worst a duplicate build.
bool lease_in_force(const std::string& text, std::int64_t written_s, std::chrono::milliseconds ttl,
                    const Digest128& key, std::string_view hmac_key) {
  const std::int64_t now = now_ms();
  const std::int64_t longest = ttl.count() + kClockSlackMs;
  if (std::optional<Lease> lease = parse_lease(text, key, hmac_key))
    return lease->expires_ms > now && lease->expires_ms <= now + longest;
  if (!hmac_key.empty()) return false;
  const std::int64_t written_ms = written_s * 1000;
  return written_ms <= now + kClockSlackMs && written_ms + ttl.count() > now;
}

// One name's lease: taken (ok), held by a lease in force (miss), or `*blocked` when a file that
// holds nothing (signed: it does not verify) is there and cannot be removed. Other results pass on.
RemoteResult take_lease_at(SharedDir& dir, const std::string& path, const std::string& text,
                           std::chrono::milliseconds ttl, const Digest128& key, const std::string& hmac_key,
                           bool* blocked) {
  RemoteResult created = dir.create_exclusive(path, text);
  // A directory this user cannot write has no leases (as HTTP): build, and write nothing.
  if (created.status == RemoteStatus::skipped && dir.writes_refused()) return remote_result(RemoteStatus::ok);
  if (created.status != RemoteStatus::miss) return created;
  auto held_now = [&] {
    std::string held;
    std::int64_t written_s = 0;
    RemoteResult read = dir.read(path, kMaxLeaseBytes, &held, &written_s);
    return read.status == RemoteStatus::ok && lease_in_force(held, written_s, ttl, key, hmac_key);
  };
  std::string held;
  std::int64_t written_s = 0;
  RemoteResult read = dir.read(path, kMaxLeaseBytes, &held, &written_s);
  if (read.status == RemoteStatus::miss) return dir.create_exclusive(path, text);  // released meanwhile
  if (read.status == RemoteStatus::ok && lease_in_force(held, written_s, ttl, key, hmac_key))
    return remote_result(RemoteStatus::miss);
  // Expired, garbage or planted: taken over (at worst two hosts build at once; both are right).
  (void)dir.remove(path);
  RemoteResult again = dir.create_exclusive(path, text);
  // Signed, only a lease that verifies holds: a name still taken by anything else is blocked
  // (never a reason to wait), unless another holder took it meanwhile.
  if (again.status == RemoteStatus::miss && !hmac_key.empty() && !held_now()) *blocked = true;
  return again;
}

// Whether a lease in force is at `path`.
bool lease_held_at(SharedDir& dir, const std::string& path, std::chrono::milliseconds ttl, const Digest128& key,
                   const std::string& hmac_key, RemoteResult* failure) {
  std::string held;
  std::int64_t written_s = 0;
  RemoteResult read = dir.read(path, kMaxLeaseBytes, &held, &written_s);
  if (read.status != RemoteStatus::ok) {
    if (read.status != RemoteStatus::corrupt && read.status != RemoteStatus::miss) *failure = read;
    return false;
  }
  return lease_in_force(held, written_s, ttl, key, hmac_key);
}

// Removes the lease at `path` when it is ours (its token): ok; miss when it is not there or not ours.
RemoteResult release_at(SharedDir& dir, const std::string& path, const std::string& token, const Digest128& key,
                        const std::string& hmac_key) {
  std::string held;
  RemoteResult read = dir.read(path, kMaxLeaseBytes, &held);
  if (read.status != RemoteStatus::ok)
    return read.status == RemoteStatus::corrupt ? remote_result(RemoteStatus::miss) : read;
  std::optional<Lease> lease = parse_lease(held, key, hmac_key);
  if (!lease || lease->token != token) return remote_result(RemoteStatus::miss);  // expired and re-taken
  return dir.remove(path);
}

}  // namespace

// (Named, not anonymous: FileRemote::State holds it.)
namespace file_remote_detail {

// The directory, shared with the worker thread (a hung call may outlive the client).
struct DirHolder {
  std::mutex mutex;
  std::string path;
  std::string hmac_key;
  std::unique_ptr<SharedDir> dir;

  // The open directory, opened at first use and again after a call that failed there (it may
  // have been removed, unmounted or replaced since: a restored mount works again).
  RemoteResult get(SharedDir** out) {
    if (!dir) {
      auto fresh = std::make_unique<SharedDir>();
      RemoteResult opened = fresh->open(path, hmac_key);
      if (opened.status == RemoteStatus::miss) {
        return remote_result(RemoteStatus::error,
                             opened.reason + " (create it for the team: docs/remote.md, Shared directories)");
      }
      if (opened.status != RemoteStatus::ok) return opened;
      dir = std::move(fresh);
    }
    *out = dir.get();
    return remote_result(RemoteStatus::ok);
  }
};

}  // namespace file_remote_detail
using file_remote_detail::DirHolder;

struct FileRemote::State {
  RemoteGate gate;
  OffThreadCall worker;
  std::shared_ptr<DirHolder> holder = std::make_shared<DirHolder>();
};

// The scheme opens its client here, where the client is known (file_scheme.cpp is not).
std::unique_ptr<RemoteClient> FileEndpoint::open(RemoteConfig config) const {
  return std::make_unique<FileRemote>(*this, std::move(config));
}

FileRemote::FileRemote(FileEndpoint endpoint, RemoteConfig config)
    : endpoint_(std::move(endpoint)), config_(std::move(config)), state_(std::make_unique<State>()) {
  namespace_path_ = remote_namespace(config_);
  for (char& c : namespace_path_) c = c == ':' ? '/' : c;
  state_->holder->path = endpoint_.path;
  state_->holder->hmac_key = config_.hmac_key;
}

FileRemote::~FileRemote() = default;

std::string FileRemote::describe() const { return endpoint_.redacted(); }

std::string FileRemote::record_path(const Digest128& key) const {
  const std::string hex = key.hex();
  return namespace_path_ + "/" + hex.substr(0, 2) + "/" + hex.substr(2, 2) + "/" + hex + ".entry";
}
std::string FileRemote::lease_path(const Digest128& key) const {
  return namespace_path_ + "/leases/" + key.hex() + ".lease";
}
std::string FileRemote::second_lease_path(const Digest128& key) const {
  if (config_.hmac_key.empty()) return {};
  const std::string hex = key.hex();
  return namespace_path_ + "/leases/" + hex + "." + hmac_sha256_hex(config_.hmac_key, "jclease-name1 " + hex).substr(0, 16) +
         ".lease";
}
std::string FileRemote::inputs_path(const Digest128& digest) const {
  return namespace_path_ + "/inputs/" + digest.hex();
}
std::string FileRemote::program_path(const Digest128& key) const { return namespace_path_ + "/program/" + key.hex(); }

RemoteResult FileRemote::run(std::function<RemoteResult(SharedDir&)> work) {
  std::shared_ptr<DirHolder> holder = state_->holder;
  return state_->gate.run(config_, [&](const RemoteGate::Call& call) {
    return state_->worker.run(call.deadline, [holder, work = std::move(work)] {
      std::lock_guard lock(holder->mutex);
      SharedDir* dir = nullptr;
      if (RemoteResult opened = holder->get(&dir); opened.status != RemoteStatus::ok) return opened;
      RemoteResult done = work(*dir);
      if (done.notice.empty()) done.notice = dir->obstruction();
      // A miss in a directory removed under us is the directory's loss, not the key's.
      if (done.status == RemoteStatus::miss && dir->gone()) {
        done = remote_result(RemoteStatus::error, holder->path + " was removed or replaced (unmounted?)");
      }
      if (done.failed()) holder->dir.reset();  // opened afresh after the back-off
      return done;
    });
  });
}

RemoteResult FileRemote::load(const Digest128& key) {
  return run(
      [key, path = record_path(key), hmac_key = config_.hmac_key, cap = config_.max_reply_bytes](SharedDir& dir) {
        std::string bytes;
        // Signed: the size the sidecar vouches for is checked before the binary is read.
        const SharedDir::HeadCheck header{
            store_detail::kEntryHeaderBytes,
            [key, hmac_key](std::string_view head, std::uint64_t size, std::uint64_t* need) {
              return check_shared_entry_header(key, head, size, hmac_key, need);
            }};
        RemoteResult read = dir.read(path, cap, &bytes, nullptr, &header);
        if (read.status != RemoteStatus::ok) return read;
        return check_shared_entry(key, std::move(bytes), hmac_key);
      });
}

RemoteResult FileRemote::save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) {
  return run(
      [path = record_path(key), bytes = encode_shared_entry(key, binary, sidecar, config_.hmac_key)](SharedDir& dir) {
        RemoteResult wrote = dir.write(path, bytes);
        if (wrote.status == RemoteStatus::ok)
          dir.sweep_tmp(std::filesystem::path(path).parent_path().string(), kStaleTmpAge);
        return wrote;
      });
}

RemoteResult FileRemote::acquire_lease(const Digest128& key, const std::string& token) {
  const std::string text = lease_text(key, token, now_ms() + config_.lease_ttl.count(), config_.hmac_key);
  return run([path = lease_path(key), second = second_lease_path(key), text, ttl = config_.lease_ttl, key,
              hmac_key = config_.hmac_key](SharedDir& dir) {
    bool blocked = false;
    RemoteResult first = take_lease_at(dir, path, text, ttl, key, hmac_key, &blocked);
    if (!blocked) return first;
    // A file nobody can remove holds the first name: the lease goes to the second, which someone
    // without the key cannot know before a holder makes it.
    bool second_blocked = false;
    RemoteResult taken = take_lease_at(dir, second, text, ttl, key, hmac_key, &second_blocked);
    if (!second_blocked) return taken;
    RemoteResult unleased = remote_result(RemoteStatus::ok);
    unleased.notice = "the build lease of " + key.hex() + " is blocked by files at " + path + " and " + second +
                      " that do not verify and cannot be removed: building without a lease (the share's owner or "
                      "root should remove them)";
    return unleased;
  });
}

RemoteResult FileRemote::lease_exists(const Digest128& key) {
  return run([path = lease_path(key), second = second_lease_path(key), ttl = config_.lease_ttl, key,
              hmac_key = config_.hmac_key](SharedDir& dir) {
    RemoteResult failure = remote_result(RemoteStatus::ok);
    bool held = lease_held_at(dir, path, ttl, key, hmac_key, &failure);
    if (!held && failure.status == RemoteStatus::ok && !second.empty())
      held = lease_held_at(dir, second, ttl, key, hmac_key, &failure);
    if (held) return remote_result(RemoteStatus::ok);
    return failure.status != RemoteStatus::ok ? failure : remote_result(RemoteStatus::miss);
  });
}

RemoteResult FileRemote::release_lease(const Digest128& key, const std::string& token) {
  return run([path = lease_path(key), second = second_lease_path(key), token, key,
              hmac_key = config_.hmac_key](SharedDir& dir) {
    if (dir.writes_refused()) return remote_result(RemoteStatus::ok);  // never taken (acquire_lease)
    RemoteResult released = release_at(dir, path, token, key, hmac_key);
    if (released.status == RemoteStatus::miss && !second.empty()) return release_at(dir, second, token, key, hmac_key);
    return released;
  });
}

RemoteResult FileRemote::publish_inputs(const Digest128& digest, std::string_view record, bool* sent) {
  *sent = false;
  if (record.size() > kMaxRemoteInputsBytes) {
    return remote_result(RemoteStatus::skipped,
                         "input record of " + std::to_string(record.size()) + " bytes is over the cap");
  }
  auto wrote = std::make_shared<bool>(false);
  RemoteResult published = run([path = inputs_path(digest),
                                value = encode_inputs_blob(digest, record, config_.hmac_key), wrote](SharedDir& dir) {
    std::uint64_t size = 0;
    if (dir.size_of(path, &size).status == RemoteStatus::ok && size == value.size())
      return remote_result(RemoteStatus::ok);
    RemoteResult stored = dir.write(path, value);
    *wrote = stored.status == RemoteStatus::ok;
    return stored;
  });
  *sent = published.status == RemoteStatus::ok && *wrote;
  return published;
}

RemoteResult FileRemote::publish_program(const Digest128& key, const nlohmann::json& summary) {
  std::string value;
  if (RemoteResult framed = encode_program_blob(key, summary, config_.hmac_key, &value);
      framed.status != RemoteStatus::ok) {
    return framed;
  }
  return run([path = program_path(key), value = std::move(value)](SharedDir& dir) { return dir.write(path, value); });
}

RemoteResult FileRemote::read_file(const std::string& path, std::uint64_t cap, std::string* bytes) {
  auto read = std::make_shared<std::string>();  // filled by the worker, taken only once it is done
  RemoteResult got = run([path, cap, read](SharedDir& dir) { return dir.read(path, cap, read.get()); });
  if (got.status == RemoteStatus::ok) *bytes = std::move(*read);
  return got;
}

// One call for the listing, one per summary: each within its own deadline, as over HTTP.
RemoteResult FileRemote::list_programs(RemoteListing* listing) {
  const std::string folder = namespace_path_ + "/program";
  auto names = std::make_shared<std::vector<std::string>>();
  RemoteResult listed = run([folder, names](SharedDir& dir) { return dir.list(folder, kMaxListedPrograms, names.get()); });
  if (listed.status != RemoteStatus::ok) return listed;
  for (const std::string& name : *names) {
    std::optional<Digest128> key = name.size() == 32 ? Digest128::from_hex(name) : std::nullopt;
    if (!key) continue;  // a tmp file of a write in progress, or not ours
    std::string value;
    RemoteResult read = read_file(folder + "/" + name, kMaxProgramSummaryBytes + kBlobOverhead, &value);
    if (read.status == RemoteStatus::miss) continue;  // gone since the listing
    if (read.status == RemoteStatus::corrupt) {
      listing->refused.push_back({folder + "/" + name, read.reason});
      continue;
    }
    if (read.status != RemoteStatus::ok) return read;
    add_program_summary(folder + "/" + name, *key, value, config_.hmac_key, listing);
  }
  listing->complete = names->size() < kMaxListedPrograms;
  return remote_result(RemoteStatus::ok);
}

RemoteResult FileRemote::fetch_inputs(const Digest128& digest) {
  std::string value;
  RemoteResult read = read_file(inputs_path(digest), kMaxRemoteInputsBytes + kBlobOverhead, &value);
  if (read.status != RemoteStatus::ok) return read;
  return check_inputs_blob(digest, value, config_.hmac_key);
}

RemoteResult FileRemote::survey(SharedDirFacts* facts) {
  auto seen = std::make_shared<SharedDirFacts>();
  RemoteResult surveyed = run([seen, ns = namespace_path_](SharedDir& dir) {
    *seen = dir.facts();
    seen->obstructed = dir.obstructed_folders(ns);
    return remote_result(RemoteStatus::ok);
  });
  if (surveyed.status == RemoteStatus::ok) *facts = *seen;  // else the worker may still be in it
  return surveyed;
}

}  // namespace jitcache

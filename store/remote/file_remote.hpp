// The file remote (JITCACHE_REMOTE=file:///shared/dir): a directory on a shared (network) file
// system that many users and hosts read and write (docs/remote.md, "Shared directories (NFS)").
// Below the directory, the record namespace with ':' as '/' ("jitcache", "jitcache/hmac-<16 hex>"):
//
//   <ns>/<k0k1>/<k2k3>/<key>.entry     an entry: the local store's format 2 file, the HMAC tag in
//                                      its sidecar when signed (store/remote/signed_entry.hpp)
//   <ns>/leases/<key>.lease            "<token> <expiry, Unix ms>[ <HMAC tag>]": the host building the
//                                      key now (signed records: an unsigned lease holds nothing)
//   <ns>/leases/<key>.<16 hex>.lease   signed: the same, where <key>.lease is blocked by a file that
//                                      does not verify and cannot be removed (second_lease_path)
//   <ns>/inputs/<32 hex>               an input record ("JCI1" blob, store/remote/remote_programs.hpp)
//   <ns>/program/<32 hex>              a program summary ("JCP1" blob)
//
// Trust: store/remote/shared_dir.hpp. Writes: a uniquely named tmp file renamed into place; tmp files a
// crashed writer left are never read (other names) and are removed by the next save into their
// folder once an hour old. Leases: created with O_EXCL (atomic on a local file system and on NFSv3
// and later), taken over once expired (clocks are assumed NTP-close; a rare takeover race costs one
// duplicate build, never a wrong one). Bounds: every call runs off the caller's thread
// (store/remote/off_thread_call.hpp) within the remote's deadline, so a hung mount costs one timeout,
// then the usual back-off (store/remote/remote_gate.hpp).
#pragma once

#include <memory>
#include <string>

#include "store/remote/file_scheme.hpp"
#include "store/remote/remote_programs.hpp"
#include "store/remote/shared_dir.hpp"
#include "store/remote_api/remote_client.hpp"

namespace jitcache {

class FileRemote final : public RemoteClient {
 public:
  using Endpoint = FileEndpoint;  // what its scheme reads from a URL

  FileRemote(FileEndpoint endpoint, RemoteConfig config);
  ~FileRemote() override;

  RemoteResult load(const Digest128& key) override;
  RemoteResult save(const Digest128& key, std::string_view binary, const nlohmann::json& sidecar) override;
  RemoteResult acquire_lease(const Digest128& key, const std::string& token) override;
  RemoteResult lease_exists(const Digest128& key) override;
  RemoteResult release_lease(const Digest128& key, const std::string& token) override;
  RemoteResult publish_inputs(const Digest128& digest, std::string_view record, bool* sent) override;
  RemoteResult publish_program(const Digest128& key, const nlohmann::json& summary) override;
  std::string describe() const override;

  // For `jitcache warm`: the program summaries (a listing of <ns>/program/) and input records.
  RemoteResult list_programs(RemoteListing* listing) override;
  RemoteResult fetch_inputs(const Digest128& digest) override;
  // For `jitcache doctor`: the directory's owner, mode, group, free space (ok), or why it is refused.
  RemoteResult survey(SharedDirFacts* facts);
  // doctor: who the directory trusts, whether this user can write it, free space
  // (store/remote/file_check.cpp).
  std::vector<RemoteFinding> check(bool read_only) override;

  // Paths below the directory, as the layout above.
  std::string record_path(const Digest128& key) const;
  std::string lease_path(const Digest128& key) const;
  // Signed only: where a key's lease is taken when a file that does not verify sits at
  // lease_path and cannot be removed (another user's, a FIFO, a folder): a name only holders of
  // the key can derive. Empty when records are not signed.
  std::string second_lease_path(const Digest128& key) const;
  std::string inputs_path(const Digest128& digest) const;
  std::string program_path(const Digest128& key) const;

  // A tmp file older than this is a crashed writer's (a record is written in well under a second).
  static constexpr std::chrono::hours kStaleTmpAge{1};

 private:
  struct State;
  // Runs `work` on the directory (opened, or re-opened once it was removed), off this thread,
  // through the gate. `work` must own what it uses (copies): it may outlive this call.
  RemoteResult run(std::function<RemoteResult(SharedDir&)> work);
  // One file read as a call of its own (SharedDir::read's meanings).
  RemoteResult read_file(const std::string& path, std::uint64_t cap, std::string* bytes);
  FileEndpoint endpoint_;
  RemoteConfig config_;
  std::string namespace_path_;
  std::unique_ptr<State> state_;
};

}  // namespace jitcache

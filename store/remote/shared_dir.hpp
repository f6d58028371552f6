// A directory many users and hosts write (file:// remotes, store/remote/file_remote.hpp), reached as the
// local store reaches its root: through a held fd, one folder at a time (openat, O_NOFOLLOW,
// O_NONBLOCK), every folder and file checked before it is believed. POSIX only.
//
// Who is trusted (docs/remote.md, "Shared directories"): pointing JITCACHE_REMOTE at a directory
// trusts whoever can write it: its owner, root, this user, and, when it is group-writable, the
// members of its group. A file or folder is believed only when one of them owns it and nobody else
// can write it (no write bit for others; a group write bit only for the directory's own group). A
// directory anyone may write is refused, unless records are signed (remote_hmac_key): then the tag,
// not the owner, says who wrote a record, and only kinds, links and sizes are checked. There a
// folder someone made first that the share's users cannot write (an outsider's `mkdir -m 755
// jitcache` in a 1777 share) would turn publishing off for good: its records go to another name
// instead, one that only holders of the key can tell (the folder's name + "." + 16 hex of an
// HMAC), with a notice. Once seen, that name may be taken first too when its folder is removed:
// then the next of eight, each unpredictable without the key. Readers and writers judge the
// folders by their modes alone, so both go to the same one.
// Writes are a uniquely named tmp file renamed into place (atomic on a local file system and on
// an NFS server); nothing here takes a POSIX lock.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "store/remote_api/remote_client.hpp"

namespace jitcache {

struct SharedDirFacts {
  std::uint64_t owner = 0;
  std::uint64_t group = 0;
  std::uint32_t mode = 0;
  bool group_shared = false;  // group-writable: its members are trusted writers
  bool world_writable = false;
  bool writable = false;  // this user may create files there (access(W_OK))
  std::uint64_t free_bytes = 0;
  // Signed and shared: folders of the namespace the share's users cannot write ("jitcache (uid
  // 1001, mode 0755)"), whose records go to their second name (SharedDir::obstructed_folders).
  std::vector<std::string> obstructed;
};

class SharedDir {
 public:
  SharedDir() = default;
  ~SharedDir();
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;

  // Opens `path` (absolute) and decides who is trusted there. ok; miss when it does not exist;
  // rejected (with the reason) when it or a folder above it is open to untrusted writers.
  // `hmac_key`: records are signed with it (empty: not signed).
  RemoteResult open(const std::string& path, const std::string& hmac_key);
  bool is_open() const { return fd_ >= 0; }
  const SharedDirFacts& facts() const { return facts_; }
  // The directory was removed (or replaced) since it was opened.
  bool gone() const;

  // What a file must start with before the rest of it is read: its first `bytes` (fewer when the
  // file is shorter) and its size go to `accept`, whose refusal is the read's result. A record
  // whose header does not match its size costs one small read, never the whole file.
  // `accept` may ask for a longer head (a header, then the signed sidecar that vouches for the
  // size): it sets `*need`, and is called again with that many bytes (once).
  struct HeadCheck {
    std::size_t bytes = 0;
    std::function<RemoteResult(std::string_view head, std::uint64_t size, std::uint64_t* need)> accept;
  };
  // A whole file below the directory ("a/b/name"): ok with its bytes; miss when it or a folder on
  // the way is absent; corrupt when one of them fails the trust rule (a planted link, FIFO, hard
  // link, another user's file), when it is over `max_bytes` (refused unread: that file's fault,
  // not the directory's) or when `head` refuses it; error on an I/O error.
  // `mtime_s`: when it was last written.
  RemoteResult read(const std::string& relative, std::uint64_t max_bytes, std::string* bytes,
                    std::int64_t* mtime_s = nullptr, const HeadCheck* head = nullptr) const;
  // The size of a trusted file (ok), or miss.
  RemoteResult size_of(const std::string& relative, std::uint64_t* size) const;
  // tmp file + rename, creating the folders on the way (as shared as the directory). skipped
  // with writes_refused() set when this user cannot write there (a read-only share).
  RemoteResult write(const std::string& relative, std::string_view bytes) const;
  // Creates the file only if no file has its name (O_EXCL): ok, or miss when one has.
  RemoteResult create_exclusive(const std::string& relative, std::string_view bytes) const;
  RemoteResult remove(const std::string& relative) const;
  // The names in a folder (at most `max`); ok with none when the folder is absent.
  RemoteResult list(const std::string& folder, std::size_t max, std::vector<std::string>* names) const;
  // Removes tmp files a crashed writer left in `folder` (older than `age`, by the file's mtime).
  void sweep_tmp(const std::string& folder, std::chrono::seconds age) const;
  bool writes_refused() const { return writes_refused_; }
  // The first folder found in another's way since open (SharedDir's comment), as a notice; "".
  const std::string& obstruction() const { return obstruction_; }
  // For `jitcache doctor`: the folders of `folder` (its own steps and the folders in it, at most
  // 300) that are in the way, as SharedDirFacts::obstructed describes them.
  std::vector<std::string> obstructed_folders(const std::string& folder) const;

  // What a tmp file's name holds between a final name and its random part.
  static constexpr std::string_view kTmpMarker = ".tmp-";

 private:
  // Opens the folder `relative` ("" is the directory itself) step by step, each checked;
  // `create`: missing folders are made. The fd is the caller's to close.
  RemoteResult open_folder(const std::string& relative, bool create, int* fd) const;
  // The folder holding `relative` (its fd, the caller's to close) and the file's own name.
  RemoteResult open_parent(const std::string& relative, bool create, int* fd, std::string* name) const;
  // A trusted file below the directory, open for reading (its fd, the caller's to close).
  RemoteResult open_file(const std::string& relative, int* fd, std::uint64_t* size, std::int64_t* mtime_s) const;
  RemoteResult check_folder(int fd, const std::string& name) const;
  RemoteResult check_file(int fd, const std::string& name, std::uint64_t* size, std::int64_t* mtime_s = nullptr) const;
  bool trusted_writer(std::uint64_t uid) const;
  // The name to use for `name` in the folder `parent_fd` (`walked`: its path below the directory):
  // itself, or when it is in the way (signed shares others may write only) the first of its other
  // names that is not; `blocked` gets each name in the way (as in_the_way says it).
  std::string usable_name(int parent_fd, const std::string& name, const std::string& walked,
                          std::vector<std::string>* blocked = nullptr) const;
  // Its `n`th other name (1..kOtherNames): name + "." + 16 hex of an HMAC of its path and n.
  std::string other_name(const std::string& name, const std::string& walked, int n) const;
  static constexpr int kOtherNames = 8;
  // "<walked> (uid N, mode M)" when `name` in `parent_fd` exists and is no folder every user of the
  // share may write (world-writable in a share that is, else group-writable with its group).
  std::string in_the_way(int parent_fd, const std::string& name, const std::string& walked) const;
  RemoteResult write_refused(int error, const std::string& what) const;

  int fd_ = -1;
  std::string path_;
  bool signed_ = false;
  std::string hmac_key_;
  mutable std::string obstruction_;
  SharedDirFacts facts_;
  std::uint64_t identity_ = 0;
  mutable bool writes_refused_ = false;
  mutable std::mutex members_mutex_;
  mutable std::map<std::uint64_t, bool> members_;  // uid -> in the directory's group
};

}  // namespace jitcache

#include "store/remote/shared_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "store/files/file_ops.hpp"
#include "store/files/root_check.hpp"
#include "store/remote/hmac_sha256.hpp"
#include "store/remote/shared_dir_path.hpp"

namespace jitcache {
namespace {

constexpr int kOpenFlags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;

// A name as it was read (a folder or file of the share) for messages.
std::string described(const std::string& name) { return name.empty() ? "the directory" : name; }

// A failed open or mkdir at `name`: what it means for a lookup. A link, a FIFO where a folder
// belongs, or a file in place of a folder was put there by someone: the entry is refused.
RemoteResult open_failure(int error, const std::string& name) {
  if (error == ENOENT) return remote_result(RemoteStatus::miss);
  if (error == ELOOP || error == ENOTDIR || error == EMLINK) {
    return remote_result(RemoteStatus::corrupt,
                         described(name) + " is a symbolic link or not what it should be; refused");
  }
  return remote_result(RemoteStatus::error, described(name) + ": " + errno_text(error));
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};


std::string random_hex() {
  std::string token = new_lease_token();
  return token.substr(0, 16);
}

RemoteResult write_all(int fd, std::string_view bytes, const std::string& name) {
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0)
      return remote_result(RemoteStatus::error, "writing " + name + ": " + errno_text(wrote < 0 ? errno : EIO));
    bytes.remove_prefix(static_cast<std::size_t>(wrote));
  }
  return remote_result(RemoteStatus::ok);
}

bool member_of(std::uint64_t uid, std::uint64_t gid) {
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(static_cast<std::size_t>(size > 0 ? size : 16384));
  passwd user{};
  passwd* found_user = nullptr;
  if (::getpwuid_r(static_cast<uid_t>(uid), &user, buffer.data(), buffer.size(), &found_user) != 0 || !found_user) {
    return false;
  }
  if (user.pw_gid == gid) return true;
  const std::string name = user.pw_name;
  std::vector<char> group_buffer(65536);
  group group_entry{};
  group* found_group = nullptr;
  if (::getgrgid_r(static_cast<gid_t>(gid), &group_entry, group_buffer.data(), group_buffer.size(), &found_group) !=
          0 ||
      !found_group) {
    return false;
  }
  for (char** member = group_entry.gr_mem; member && *member; ++member) {
    if (name == *member) return true;
  }
  return false;
}

}  // namespace

SharedDir::~SharedDir() {
  if (fd_ >= 0) ::close(fd_);
}

bool SharedDir::trusted_writer(std::uint64_t uid) const {
  if (uid == fileops::current_user() || uid == 0 || uid == facts_.owner) return true;
  if (!facts_.group_shared) return false;
  std::lock_guard lock(members_mutex_);
  auto [it, added] = members_.try_emplace(uid, false);
  if (added) it->second = member_of(uid, facts_.group);
  return it->second;
}

RemoteResult SharedDir::check_folder(int fd, const std::string& name) const {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return remote_result(RemoteStatus::error, described(name) + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode))
    return remote_result(RemoteStatus::corrupt, described(name) + " is not a directory; refused");
  if (signed_) return remote_result(RemoteStatus::ok);  // the records' tags decide; nothing else does
  if (!trusted_writer(st.st_uid)) {
    return remote_result(RemoteStatus::corrupt, described(name) + " is owned by uid " + std::to_string(st.st_uid) +
                                                    ", who cannot write the shared directory; refused");
  }
  const bool group_ok = facts_.group_shared && st.st_gid == facts_.group;
  if ((st.st_mode & 0002) || ((st.st_mode & 0020) && !group_ok)) {
    return remote_result(RemoteStatus::corrupt, described(name) +
                                                    " is writable by users outside the directory's trust (mode " +
                                                    octal_mode(st.st_mode) + "); refused");
  }
  return remote_result(RemoteStatus::ok);
}

RemoteResult SharedDir::check_file(int fd, const std::string& name, std::uint64_t* size, std::int64_t* mtime_s) const {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return remote_result(RemoteStatus::error, name + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return remote_result(RemoteStatus::corrupt, name + " is not a regular file; refused");
  // A second name for the file: a link planted to serve a file of another key or another place.
  if (st.st_nlink != 1)
    return remote_result(RemoteStatus::corrupt, name + " has " + std::to_string(st.st_nlink) + " links; refused");
  if (!signed_) {
    if (!trusted_writer(st.st_uid)) {
      return remote_result(RemoteStatus::corrupt, name + " is owned by uid " + std::to_string(st.st_uid) +
                                                      ", who cannot write the shared directory; refused");
    }
    if (st.st_mode & 0022) {
      return remote_result(RemoteStatus::corrupt,
                           name + " is writable by group or others (mode " + octal_mode(st.st_mode) + "); refused");
    }
  }
  *size = static_cast<std::uint64_t>(st.st_size);
  if (mtime_s) *mtime_s = st.st_mtime;
  return remote_result(RemoteStatus::ok);
}

RemoteResult SharedDir::open(const std::string& path, const std::string& hmac_key) {
  signed_ = !hmac_key.empty();
  hmac_key_ = hmac_key;
  WalkedDirectory walked;
  if (RemoteResult reached = open_directory_walked(path, &walked); reached.status != RemoteStatus::ok) return reached;
  Fd fd(walked.fd);
  path_ = walked.resolved;  // what gone() looks at again: never through a link
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return remote_result(RemoteStatus::error, path + ": " + errno_text(errno));
  facts_.owner = st.st_uid;
  facts_.group = st.st_gid;
  facts_.mode = st.st_mode & 07777;
  facts_.group_shared = (st.st_mode & 0020) != 0;
  facts_.world_writable = (st.st_mode & 0002) != 0;
  facts_.writable = ::faccessat(fd.get(), ".", W_OK, AT_EACCESS) == 0;
  struct statvfs space {};
  if (::fstatvfs(fd.get(), &space) == 0)
    facts_.free_bytes = static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize;
  identity_ = st.st_ino;
  if (facts_.world_writable && !signed_) {
    return remote_result(RemoteStatus::rejected, path + " is writable by every user (mode " + octal_mode(st.st_mode) +
                                                     "): anyone could plant a binary there; set remote_hmac_key, or "
                                                     "share it with a group (docs/remote.md, Shared directories)");
  }
  // The folders above and those holding a link on the way: nobody outside the trust may rename or
  // replace the directory.
  for (const FolderAbove& folder : walked.above) {
    const struct stat& above = folder.st;
    const bool sticky = (above.st_mode & S_ISVTX) != 0;
    const bool group_ok = facts_.group_shared && above.st_gid == facts_.group;
    if (!signed_ && (!trusted_writer(above.st_uid) ||
                     (!sticky && ((above.st_mode & 0002) || ((above.st_mode & 0020) && !group_ok))))) {
      return remote_result(RemoteStatus::rejected, "its parent folder " + folder.path + " (uid " +
                                                       std::to_string(above.st_uid) + ", mode " +
                                                       octal_mode(above.st_mode) +
                                                       ") lets users outside the directory's trust replace it");
    }
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd.release();
  return remote_result(RemoteStatus::ok);
}

bool SharedDir::gone() const {
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) return true;
  if (st.st_nlink == 0) return true;
  struct stat now {};
  return ::stat(path_.c_str(), &now) != 0 || now.st_ino != st.st_ino || st.st_ino != identity_;
}

RemoteResult SharedDir::open_folder(const std::string& relative, bool create, int* out) const {
  Fd folder(::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  if (folder.get() < 0) return remote_result(RemoteStatus::error, errno_text(errno));
  std::string walked;
  for (const std::string& step : path_steps(relative)) {
    if (step == "." || step == "..")
      return remote_result(RemoteStatus::error, "'" + relative + "' leaves the directory");
    walked += (walked.empty() ? "" : "/") + step;
    const std::string name = usable_name(folder.get(), step, walked);
    int next = ::openat(folder.get(), name.c_str(), O_RDONLY | O_DIRECTORY | kOpenFlags);
    if (next < 0 && errno == ENOENT && create) {
      // As shared as the directory: its group (a setgid directory passes it on by itself), its bits.
      if (::mkdirat(folder.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return write_refused(errno, walked);
      next = ::openat(folder.get(), name.c_str(), O_RDONLY | O_DIRECTORY | kOpenFlags);
      struct stat st {};
      if (next >= 0 && ::fstat(next, &st) == 0 && st.st_uid == fileops::current_user()) {
        if (facts_.group_shared && st.st_gid != facts_.group)
          (void)::fchown(next, static_cast<uid_t>(-1), static_cast<gid_t>(facts_.group));
        (void)::fchmod(next, facts_.mode & (signed_ ? 07777 : 03775));
      }
    }
    if (next < 0) return open_failure(errno, walked);
    Fd opened(next);
    if (RemoteResult checked = check_folder(opened.get(), walked); checked.status != RemoteStatus::ok) return checked;
    folder.reset(opened.release());
  }
  *out = folder.release();
  return remote_result(RemoteStatus::ok);
}

std::string SharedDir::in_the_way(int parent_fd, const std::string& name, const std::string& walked) const {
  struct stat st {};
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  // Open to whoever may write the share, as every folder jitcache makes there is (the share's own
  // mode and group): judged from the folder alone, so readers and writers choose the same name.
  const bool open_to_writers =
      S_ISDIR(st.st_mode) && (facts_.world_writable ? (st.st_mode & 0002) != 0
                                                    : (st.st_mode & 0002) || ((st.st_mode & 0020) && st.st_gid == facts_.group));
  if (open_to_writers) return {};
  return walked + " (uid " + std::to_string(st.st_uid) + ", mode " + octal_mode(st.st_mode) +
         (S_ISDIR(st.st_mode) ? ")" : ", not a folder)");
}

std::string SharedDir::other_name(const std::string& name, const std::string& walked, int n) const {
  // The first keeps its derivation of old, so that the folders of existing shares stay found.
  const std::string purpose = n == 1 ? "jcfolder1 " + walked : "jcfolder1 " + std::to_string(n) + " " + walked;
  return name + "." + hmac_sha256_hex(hmac_key_, purpose).substr(0, 16);
}

std::string SharedDir::usable_name(int parent_fd, const std::string& name, const std::string& walked,
                                   std::vector<std::string>* blocked) const {
  // Only where others may write: a signed share open to every user or to a group.
  if (!signed_ || !(facts_.world_writable || facts_.group_shared)) return name;
  std::string first = in_the_way(parent_fd, name, walked);
  if (first.empty()) return name;
  // Names unknown to whoever lacks the key until a holder makes one, and then (sticky) not theirs to
  // move. One seen and made first by an outsider after its folder was removed passes to the next,
  // which he cannot predict; past the last, the write is refused naming it.
  std::vector<std::string> passed = {std::move(first)};
  std::string chosen;
  const std::string above = walked.substr(0, walked.size() - name.size());
  for (int n = 1; n <= kOtherNames; ++n) {
    chosen = other_name(name, walked, n);
    std::string also = in_the_way(parent_fd, chosen, above + chosen);
    if (also.empty()) break;
    passed.push_back(std::move(also));
  }
  if (obstruction_.empty()) {
    std::string named;
    for (const std::string& folder : passed) named += (named.empty() ? "" : ", ") + path_ + "/" + folder;
    obstruction_ = named + (passed.size() == 1 ? " is" : " are") +
                   " in the way: the share's users cannot write it, so its records go to " + chosen +
                   " instead (its owner or root should remove it: docs/remote.md, Shared directories)";
  }
  if (blocked) blocked->insert(blocked->end(), passed.begin(), passed.end());
  return chosen;
}

std::vector<std::string> SharedDir::obstructed_folders(const std::string& folder_name) const {
  std::vector<std::string> found;
  if (!signed_ || !(facts_.world_writable || facts_.group_shared)) return found;
  Fd folder(::fcntl(fd_, F_DUPFD_CLOEXEC, 0));
  std::string walked;
  for (const std::string& step : path_steps(folder_name)) {
    walked += (walked.empty() ? "" : "/") + step;
    const int next = ::openat(folder.get(), usable_name(folder.get(), step, walked, &found).c_str(),
                              O_RDONLY | O_DIRECTORY | kOpenFlags);
    if (next < 0) return found;
    folder.reset(next);
  }
  std::vector<std::string> names;
  constexpr std::size_t kMaxNames = 300;  // 256 shard folders, leases, inputs, program and a few
  if (list(folder_name, kMaxNames, &names).status != RemoteStatus::ok) return found;
  for (const std::string& name : names) {
    if (name.find('.') != std::string::npos) continue;  // a second name, or a tmp file
    if (std::string blocked = in_the_way(folder.get(), name, walked + "/" + name); !blocked.empty())
      found.push_back(blocked);
  }
  return found;
}

RemoteResult SharedDir::open_parent(const std::string& relative, bool create, int* fd, std::string* name) const {
  const std::filesystem::path path(relative);
  *name = path.filename().string();
  return open_folder(path.parent_path().string(), create, fd);
}

RemoteResult SharedDir::open_file(const std::string& relative, int* fd, std::uint64_t* size,
                                  std::int64_t* mtime_s) const {
  int raw = -1;
  std::string name;
  if (RemoteResult opened = open_parent(relative, false, &raw, &name); opened.status != RemoteStatus::ok) return opened;
  Fd folder(raw);
  Fd file(::openat(folder.get(), name.c_str(), O_RDONLY | kOpenFlags));
  if (file.get() < 0) return open_failure(errno, relative);
  if (RemoteResult checked = check_file(file.get(), relative, size, mtime_s); checked.status != RemoteStatus::ok) {
    return checked;
  }
  *fd = file.release();
  return remote_result(RemoteStatus::ok);
}

namespace {

// Fills `bytes` from `from` on (its size says how much); shorter when the file shrank meanwhile.
RemoteResult read_range(int fd, std::size_t from, std::string* bytes, const std::string& name) {
  std::size_t done = from;
  while (done < bytes->size()) {
    ssize_t got = ::pread(fd, bytes->data() + done, bytes->size() - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return remote_result(RemoteStatus::error, "reading " + name + ": " + errno_text(errno));
    if (got == 0) break;  // shortened while read: the record's own checks refuse it
    done += static_cast<std::size_t>(got);
  }
  bytes->resize(done);
  return remote_result(RemoteStatus::ok);
}

}  // namespace

RemoteResult SharedDir::read(const std::string& relative, std::uint64_t max_bytes, std::string* bytes,
                             std::int64_t* mtime_s, const HeadCheck* head) const {
  int raw = -1;
  std::uint64_t size = 0;
  if (RemoteResult opened = open_file(relative, &raw, &size, mtime_s); opened.status != RemoteStatus::ok) return opened;
  Fd file(raw);
  if (size > max_bytes) {
    return remote_result(RemoteStatus::corrupt, relative + ": " + std::to_string(size) + " bytes, larger than " +
                                                    std::to_string(max_bytes) + " bytes: refused unread");
  }
  std::size_t read_first = 0;
  if (head) {
    std::uint64_t want = head->bytes;
    for (int round = 0; round < 2; ++round) {
      bytes->resize(static_cast<std::size_t>(std::min<std::uint64_t>(want, size)));
      if (RemoteResult got = read_range(file.get(), read_first, bytes, relative); got.status != RemoteStatus::ok)
        return got;
      read_first = bytes->size();
      std::uint64_t need = 0;
      if (RemoteResult accepted = head->accept(*bytes, size, &need); accepted.status != RemoteStatus::ok) return accepted;
      if (need <= bytes->size()) break;
      want = need;
    }
  }
  bytes->resize(static_cast<std::size_t>(size));
  return read_range(file.get(), read_first, bytes, relative);
}

RemoteResult SharedDir::size_of(const std::string& relative, std::uint64_t* size) const {
  int raw = -1;
  RemoteResult opened = open_file(relative, &raw, size, nullptr);
  if (raw >= 0) ::close(raw);
  return opened;
}

RemoteResult SharedDir::write_refused(int error, const std::string& what) const {
  if (error == EACCES || error == EPERM || error == EROFS) {
    writes_refused_ = true;
    return remote_result(RemoteStatus::skipped, path_ + " is read-only for this user (" + errno_text(error) +
                                                    "): hits are served, nothing is written there");
  }
  return remote_result(RemoteStatus::error, "creating " + described(what) + ": " + errno_text(error));
}

RemoteResult SharedDir::write(const std::string& relative, std::string_view bytes) const {
  if (writes_refused_) return remote_result(RemoteStatus::skipped, path_ + " is read-only for this user");
  int raw = -1;
  std::string final_name;
  if (RemoteResult opened = open_parent(relative, true, &raw, &final_name); opened.status != RemoteStatus::ok) {
    return opened;
  }
  Fd folder(raw);
  const std::string tmp = final_name + std::string(kTmpMarker) + random_hex();
  Fd file(::openat(folder.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | kOpenFlags, 0600));
  if (file.get() < 0) return write_refused(errno, relative);
  // Readable by whoever may read the directory; written by nobody after the rename.
  (void)::fchmod(file.get(), 0600 | (facts_.mode & 0044));
  RemoteResult wrote = write_all(file.get(), bytes, relative);
  // close() is where NFS sends what is left (close-to-open): its error is the write's.
  if (wrote.status == RemoteStatus::ok && ::close(file.release()) != 0) {
    wrote = remote_result(RemoteStatus::error, "writing " + relative + ": " + errno_text(errno));
  }
  if (wrote.status == RemoteStatus::ok &&
      ::renameat(folder.get(), tmp.c_str(), folder.get(), final_name.c_str()) != 0) {
    wrote = remote_result(RemoteStatus::error, "renaming into " + relative + ": " + errno_text(errno));
  }
  if (wrote.status != RemoteStatus::ok) (void)::unlinkat(folder.get(), tmp.c_str(), 0);
  return wrote;
}

RemoteResult SharedDir::create_exclusive(const std::string& relative, std::string_view bytes) const {
  if (writes_refused_) return remote_result(RemoteStatus::skipped, path_ + " is read-only for this user");
  int raw = -1;
  std::string name;
  if (RemoteResult opened = open_parent(relative, true, &raw, &name); opened.status != RemoteStatus::ok) return opened;
  Fd folder(raw);
  Fd file(::openat(folder.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | kOpenFlags, 0600));
  if (file.get() < 0) return errno == EEXIST ? remote_result(RemoteStatus::miss) : write_refused(errno, relative);
  (void)::fchmod(file.get(), 0600 | (facts_.mode & 0044));
  RemoteResult wrote = write_all(file.get(), bytes, relative);
  if (wrote.status == RemoteStatus::ok && ::close(file.release()) != 0) {
    wrote = remote_result(RemoteStatus::error, "writing " + relative + ": " + errno_text(errno));
  }
  if (wrote.status != RemoteStatus::ok) (void)::unlinkat(folder.get(), name.c_str(), 0);
  return wrote;
}

RemoteResult SharedDir::remove(const std::string& relative) const {
  int raw = -1;
  std::string name;
  if (RemoteResult opened = open_parent(relative, false, &raw, &name); opened.status != RemoteStatus::ok) return opened;
  Fd folder(raw);
  if (::unlinkat(folder.get(), name.c_str(), 0) == 0) return remote_result(RemoteStatus::ok);
  return errno == ENOENT ? remote_result(RemoteStatus::miss)
                         : remote_result(RemoteStatus::error, relative + ": " + errno_text(errno));
}

RemoteResult SharedDir::list(const std::string& folder_name, std::size_t max, std::vector<std::string>* names) const {
  int raw = -1;
  RemoteResult opened = open_folder(folder_name, false, &raw);
  if (opened.status == RemoteStatus::miss) return remote_result(RemoteStatus::ok);
  if (opened.status != RemoteStatus::ok) return opened;
  DIR* listing = ::fdopendir(raw);
  if (!listing) {
    ::close(raw);
    return remote_result(RemoteStatus::error, folder_name + ": " + errno_text(errno));
  }
  while (dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names->size() >= max) break;
    names->push_back(name);
  }
  ::closedir(listing);
  return remote_result(RemoteStatus::ok);
}

void SharedDir::sweep_tmp(const std::string& folder_name, std::chrono::seconds age) const {
  std::vector<std::string> names;
  constexpr std::size_t kMaxNames = 4096;  // a shard folder holds a few entries; never walk a huge one
  if (list(folder_name, kMaxNames, &names).status != RemoteStatus::ok) return;
  int raw = -1;
  if (open_folder(folder_name, false, &raw).status != RemoteStatus::ok) return;
  Fd folder(raw);
  const std::int64_t cutoff_s = fileops::now_ns() / 1000000000 - age.count();
  for (const std::string& name : names) {
    if (name.find(kTmpMarker) == std::string::npos) continue;
    struct stat st {};
    if (::fstatat(folder.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (st.st_mtime < cutoff_s) (void)::unlinkat(folder.get(), name.c_str(), 0);
  }
}

}  // namespace jitcache

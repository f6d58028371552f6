// The capture helper's process (capture/helper_process.hpp): one per app, reading jobs from the
// app's socket for as long as the app runs and building them one by one in a worker process that
// keeps the driver loaded (a program then costs about what it cost the app, not a driver start
// each). A worker that dies (a driver crash, the time limit) costs the program it was
// building; the next job gets a new worker.
//
// Locks (docs/concurrency.md, "Captures in flight"): each job comes with its capture marker, held
// until its entry is stored or given up. A build lock is held only for the program being built: a
// process that wants a key the helper has not started builds it itself (waiting would cost it the
// helper's whole job, more than its own build), one that waits for the key under way gets it the
// moment it is stored. A key another process builds now (it holds the key's build lock) waits
// behind the other jobs, so that no key is compiled twice at the same time.
#include "capture/helper_process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/apps_cpu_use.hpp"
#include "capture/apps_driver_cache.hpp"
#include "capture/fd_passing.hpp"
#include "capture/helper_priority.hpp"
#include "capture/replay_scratch.hpp"
#include "core/cpu_account.hpp"
#include "core/platform.hpp"
#include "core/stats.hpp"
#include "hashing/recorded_inputs.hpp"

namespace jitcache {
namespace {

// An open file this process owns.
class OwnedFile {
 public:
  explicit OwnedFile(int fd = -1) : fd_(fd) {}
  OwnedFile(OwnedFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFile& operator=(OwnedFile&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~OwnedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Job {
  ReplayOptions options;  // inputs, device digest, the app's key
  Digest128 key;
  OwnedFile record;  // the recorded inputs the app sent (hashing/recorded_inputs.hpp)
  KeyLock mark;      // the capture marker: the capture is in flight while it is held
  KeyLock lock;      // the build lock, held while the program is being built
};

// The recorded inputs from the file the app or the helper sent, at most their cap.
std::optional<std::string> read_record(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size < 0 ||
      static_cast<std::uint64_t>(info.st_size) > kMaxRecordedInputsBytes) {
    return std::nullopt;
  }
  std::string bytes(static_cast<std::size_t>(info.st_size), '\0');
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

// A message's colon-separated fields.
std::vector<std::string> split_fields(const std::string& text) {
  std::vector<std::string> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    fields.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) return fields;
    start = colon + 1;
  }
}

// INPUTS:DEVICE_DIGEST:KEY:HAS_LOCK (capture/hand_over.cpp), with the recorded inputs' file, the
// marker's descriptor and, for HAS_LOCK 1, the build lock's. Anything else is refused and its
// descriptors closed.
std::optional<Job> parse_job(const std::string& text, std::vector<int>& fds, DiskStore& store,
                             const ReplayOptions& base) {
  const std::vector<std::string> fields = split_fields(text);
  std::optional<Digest128> key = fields.size() == 4 ? Digest128::from_hex(fields[2]) : std::nullopt;
  const std::size_t files = fields.size() == 4 && fields[3] == "1" ? 3 : 2;
  if (!key || fds.size() != files || (fields[3] != "0" && fields[3] != "1")) {
    for (int fd : fds) ::close(fd);
    return std::nullopt;
  }
  std::optional<Job> job(std::in_place);
  job->options = base;
  job->options.inputs = fields[0];
  job->options.device_digest = fields[1];
  job->options.expect_key = fields[2];
  job->key = *key;
  job->record = OwnedFile(fds[0]);
  // Only the key's own marker and lock: anything else handed over proves nothing (an adoption
  // that fails closes its descriptor).
  const bool marked = !store.adopt_capture_mark(*key, fds[1], &job->mark);
  if (files == 3) (void)store.adopt_key_lock(*key, fds[2], /*owns_name=*/true, &job->lock);
  if (!marked) job.reset();
  return job;
}

// This process's CPU so far: RUSAGE_SELF, its own (its workers account for theirs), or
// RUSAGE_CHILDREN, its reaped workers'.
std::chrono::microseconds cpu_of(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return std::chrono::microseconds(0);
  auto us = [](const timeval& t) { return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec); };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// SIGPROF ends this process after `seconds` of CPU time from now (0: no limit). CPU time, not wall
// time: the helper runs behind all other work, so a build may wait long for a core.
void limit_cpu_time(unsigned seconds) {
  (void)std::signal(SIGPROF, SIG_DFL);  // a driver's handler would keep a runaway build alive
  itimerval timer{};
  timer.it_value.tv_sec = seconds;
  (void)::setitimer(ITIMER_PROF, &timer, nullptr);
}

// The helper process's own CPU that a job's trace shows (core/cpu_account.hpp).
struct HelperCpu {
  std::uint64_t start_us = 0;    // from its start to its loop: the first job only
  std::uint64_t between_us = 0;  // in its loop since the job before (reading jobs, pacing, starting workers)
};

// A child of this process that builds the programs it is sent, one at a time: it says "s" when it
// starts one (its driver loaded: the warm-up before it may take seconds on a busy machine) and
// answers "1" (stored, or found stored) or "0" when done.
class Worker {
 public:
  explicit Worker(const HelperWork& work) : work_(work) {}
  ~Worker() { stop(); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool in_apps_driver_cache() const { return in_apps_driver_cache_; }
  int socket() const { return socket_; }

  // `in_apps_driver_cache`: build in the app's own PoCL kernel cache (apps_driver_cache.hpp),
  // else in a scratch folder of the worker's own.
  bool start(const ReplayOptions& base, bool in_apps_driver_cache) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return false;
    ReplayOptions options = base;
    options.in_apps_driver_cache = in_apps_driver_cache_ = in_apps_driver_cache;
    if (!in_apps_driver_cache) {
      scratch_ = std::make_unique<ReplayScratch>();  // removed once the worker is reaped, however it ended
      options.scratch = scratch_->path().string();
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      // Nothing of the helper's but its socket: a lock or marker the helper lets go must be free.
      const int mine = ::dup2(pair[1], 3);
      ::close_range(4, ~0U, 0);
      serve(mine, options, work_);
    }
    ::close(pair[1]);
    if (pid_ < 0) {
      ::close(pair[0]);
      scratch_.reset();
      return false;
    }
    socket_ = pair[0];
    return true;
  }

  bool warm_up(const std::string& device_digest) { return send_with_files(socket_, "warm:" + device_digest, {}); }

  // `helper_cpu`: the helper's own CPU for this job, by step, in microseconds (its trace shows it).
  bool send(const Job& job, bool at_exit, bool waited_for, const HelperCpu& helper_cpu) {
    return send_with_files(socket_, job.options.inputs + ":" + job.options.device_digest + ":" +
                                        job.options.expect_key + ":" + (at_exit ? "1" : "0") + ":" +
                                        (waited_for ? "1" : "0") + ":" + std::to_string(helper_cpu.start_us) + ":" +
                                        std::to_string(helper_cpu.between_us),
                           {job.record.get()});
  }

  enum class Answer { started, done, died };
  // What the worker says of the job sent last: it started building it, or is done with it (stored
  // or not), or it died (then it is reaped).
  Answer answer() {
    std::string text;
    std::vector<int> fds;
    if (receive_with_files(socket_, &text, &fds) == 1) return text == "s" ? Answer::started : Answer::done;
    stop();
    return Answer::died;
  }

  void stop() {
    if (pid_ <= 0) return;
    ::close(socket_);  // a worker between jobs ends at once
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    socket_ = -1;
    scratch_.reset();
  }

 private:
  [[noreturn]] static void serve(int socket, const ReplayOptions& base, const HelperWork& work) {
    cpu_account::start("worker_start");  // its CPU since the fork
    // Before the driver loads: it reads its variables once (replay_one sets the same again).
    if (!base.scratch.empty()) platform::set_environment("POCL_CACHE_DIR", base.scratch);
    for (;;) {
      std::string text;
      std::vector<int> fds;
      if (receive_with_files(socket, &text, &fds) != 1) std::_Exit(0);
      if (text.rfind("warm:", 0) == 0) {  // no answer: the job after it is answered
        // In the app's PoCL cache the programs' builds load what the app built: no compiler to load.
        work.warm_up(text.substr(5), /*load_compiler=*/!base.in_apps_driver_cache);
        continue;
      }
      cpu_account::switch_to("job");  // the record, the key, the lookups, the program: ours, per key
      ReplayOptions job = base;
      const std::vector<std::string> fields = split_fields(text);
      if (fields.size() != 7 || fds.size() != 1) std::_Exit(1);
      cpu_account::add_other("helper_startup", std::strtoull(fields[5].c_str(), nullptr, 10));
      cpu_account::add_other("helper", std::strtoull(fields[6].c_str(), nullptr, 10));
      job.record = read_record(fds[0]);
      ::close(fds[0]);
      job.inputs = fields[0];
      job.device_digest = fields[1];
      job.expect_key = fields[2];
      job.at_exit = fields[3] == "1";
      job.waited_for = fields[4] == "1";
      job.lock_held_by_parent = true;
      pause_for_tests("JITCACHE_TEST_WORKER_PAUSE_FIFO");
      if (!send_with_files(socket, "s", {})) std::_Exit(0);
      limit_cpu_time(job.time_limit_s);
      ReplayResult result = work.replay_one(job);
      limit_cpu_time(0);
      if (!replay_done(result)) count_helper_failure("capture_helper_failed");
      pause_for_tests("JITCACHE_TEST_WORKER_ANSWER_FIFO");
      if (!send_with_files(socket, replay_done(result) ? "1" : "0", {})) std::_Exit(0);
    }
  }

  // Tests only: the worker reads a byte from the FIFO `variable` names, before each build
  // (JITCACHE_TEST_WORKER_PAUSE_FIFO: as one still loading its driver would take that long) or
  // after each, before it answers (JITCACHE_TEST_WORKER_ANSWER_FIFO: as a helper starved behind the
  // apps would take that long to read the answer).
  static void pause_for_tests(const char* variable) {
    const char* fifo = std::getenv(variable);
    const int gate = fifo ? ::open(fifo, O_RDONLY | O_CLOEXEC) : -1;
    char byte;
    if (gate >= 0 && ::read(gate, &byte, 1) < 0) byte = 0;
    if (gate >= 0) ::close(gate);
  }

  const HelperWork& work_;
  pid_t pid_ = -1;
  int socket_ = -1;
  bool in_apps_driver_cache_ = false;
  std::unique_ptr<ReplayScratch> scratch_;
};

// How long a helper with nothing to do waits for its app's next job before it ends.
constexpr std::chrono::milliseconds kIdleExit{30000};
// helper_time_limit bounds a build's CPU time (the worker's SIGPROF): a helper behind busy work
// may take far longer in wall time without being stuck. A worker still not done after this many
// times the limit in wall time hangs without using CPU time (a driver deadlocked) and is killed.
constexpr int kWallTimeLimitFactor = 6;
// How often a helper at work looks whether it should build at full priority (build_at_full_priority).
constexpr std::chrono::milliseconds kFullLook{250};
// Between two full looks it looks, this often, whether someone has come to wait for it (a waiter
// measures its pace from 100 ms on: capture/helper_pace.hpp) and, at full priority beside no app at
// work, whether an app has started: a run started a moment after the one before is short, and a
// helper at full priority beside it takes much of its CPU.
constexpr std::chrono::milliseconds kQuickLook{25};

class Helper {
 public:
  Helper(const ReplayOptions& options, DiskStore& store, const Settings& settings, const HelperWork& work,
         std::optional<std::filesystem::path> apps_driver_cache)
      : base_(options), apps_driver_cache_(std::move(apps_driver_cache)), store_(store), settings_(settings),
        worker_(work) {}

  int run() {
    cpu_at_loop_ = cpu_at_last_job_ = cpu_of(RUSAGE_SELF);
    for (;;) {
      if (!building_ && !paused()) start_next();
      if (!building_ && pending_.empty() && app_gone_) break;
      pollfd fds[2] = {{app_gone_ ? -1 : base_.socket_fd, POLLIN, 0}, {building_ ? worker_.socket() : -1, POLLIN, 0}};
      int timeout_ms = -1;
      bool hung = false;  // past the wall-time bound of a worker that hangs without using CPU time
      if (building_) {  // woken to see whether someone has come to wait for the helper meanwhile
        timeout_ms = static_cast<int>(kQuickLook.count());
        if (base_.time_limit_s > 0) {
          const auto left = started_ + kWallTimeLimitFactor * std::chrono::seconds(base_.time_limit_s) -
                            std::chrono::steady_clock::now();
          const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
          hung = left_ms <= timeout_ms;
          timeout_ms = static_cast<int>(std::clamp<std::int64_t>(left_ms, 0, timeout_ms));
        }
      } else if (!building_ && pending_.empty() && !paused_for_tests()) {
        timeout_ms = static_cast<int>(kIdleExit.count());
      }
      const int ready = ::poll(fds, 2, timeout_ms);
      if (ready < 0 && errno != EINTR) return 1;
      // Idle while the app runs on (a server that built at its start): the worker's driver memory
      // goes back. Shutting the socket's reading side first makes the app's next send fail (it
      // then starts a new helper), while what it sent before is still read and built here.
      if (ready == 0 && !building_ && pending_.empty()) {
        ::shutdown(base_.socket_fd, SHUT_RD);
        continue;
      }
      if (fds[0].revents) receive_from_app();
      if (fds[1].revents) {
        const Worker::Answer answer = worker_.answer();
        // Waiters weigh what is left of a build under way: only now is it (store/local/key_lock.cpp).
        if (answer == Worker::Answer::started) {
          worker_started_ = true;
          store_.mark_capture_started(building_->key, building_->mark, worker_now());
        } else {
          finish(answer == Worker::Answer::died);  // stored or not, it is done with
        }
      } else if (ready == 0 && building_ && hung) {
        worker_.stop();
        finish(/*died=*/true);
      } else if (ready == 0 && building_ && std::chrono::steady_clock::now() - last_look_ < kFullLook) {
        // Between two full looks: whether someone waits (an app announces itself before it comes
        // to wait), and beside no app at work whether one has started.
        if (beside_no_app_at_work_) build_at_full_priority(!an_app_at_work() || someone_waits());
        else if (someone_waits()) build_at_full_priority(true);
      } else if (ready == 0 && building_) {
        build_at_full_priority(at_full_priority());
      }
    }
    return 0;
  }

  // This process's CPU when run() started: the helper's start.
  std::chrono::microseconds cpu_at_loop() const { return cpu_at_loop_; }
  // Its ending marker, when its app handed one over, to hold until the last write.
  KeyLock take_ending() { return std::move(ending_); }

 private:
  // Tests only (JITCACHE_TEST_HELPER_PAUSE_FIFO=PATH): the helper starts nothing before its app
  // has gone (every job received); then it writes a byte to PATH.paused and reads one from PATH
  // before it goes on.
  bool paused() {
    if (!paused_for_tests()) return false;
    if (!app_gone_) return true;
    gate_passed_ = true;
    char byte = 'p';
    const int told = ::open((pause_fifo_ + ".paused").c_str(), O_WRONLY | O_CLOEXEC);
    if (told >= 0 && ::write(told, &byte, 1) < 0) byte = 0;
    if (told >= 0) ::close(told);
    const int gate = ::open(pause_fifo_.c_str(), O_RDONLY | O_CLOEXEC);
    if (gate >= 0 && ::read(gate, &byte, 1) < 0) byte = 0;
    if (gate >= 0) ::close(gate);
    return false;
  }

  void receive_from_app() {
    std::string text;
    std::vector<int> fds;
    const int got = receive_with_files(base_.socket_fd, &text, &fds);
    if (got == 0 || (got < 0 && errno != EMSGSIZE)) {
      app_gone_ = true;  // no more jobs: the rest are built with nobody else to wait for
      return;
    }
    if (got < 0) return;
    if (text == "ending") {  // DiskStore::mark_helper_ending: held past this helper's last write
      if (fds.size() == 1) (void)store_.adopt_helper_ending(base_.for_pid, fds[0], &ending_);  // a failure closes it
      else for (int fd : fds) ::close(fd);
      return;
    }
    if (text.rfind("warm:", 0) == 0) {  // the app is about to build: load the driver meanwhile
      for (int fd : fds) ::close(fd);
      if (!worker_.running() && !worker_.start(base_, apps_driver_cache_.usable())) return;
      if (!worker_.warm_up(text.substr(5))) worker_.stop();
      return;
    }
    std::optional<Job> job = parse_job(text, fds, store_, base_);
    if (!job) {
      count_helper_failure("capture_helper_failed");
      return;
    }
    job->lock.release();  // a job not started holds no lock: whoever wants it meanwhile builds it
    pending_.push_back(std::move(*job));
  }

  // The job to start next: one that another process waits for (its `.wanted` marker) first. Jobs in
  // `skip` (put back this round: start_next) only when nothing else is left.
  std::deque<Job>::iterator next_job(const std::set<Digest128>& skip = {}) {
    auto first = pending_.end();
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (skip.count(it->key)) continue;
      if (store_.key_wanted(it->key)) return it;
      if (first == pending_.end()) first = it;
    }
    return first != pending_.end() ? first : pending_.begin();
  }

  bool paused_for_tests() const { return !pause_fifo_.empty() && !gate_passed_; }

  // Behind the apps of its cache while any runs and uses the CPU (its own, the next run of it,
  // another app); with none left, or all idle, what remains is the cache's filling, which the next
  // run wants. And for a waiter.
  bool at_full_priority(const Job* starting = nullptr) {
    last_look_ = std::chrono::steady_clock::now();
    beside_no_app_at_work_ = false;
    return someone_waits(starting) || (beside_no_app_at_work_ = !an_app_at_work());
  }

  // The worker's pid and CPU time now, for a marker: a waiter measures its pace from there.
  std::optional<DiskStore::CaptureWorker> worker_now() const {
    const std::optional<std::chrono::microseconds> cpu = platform::process_cpu_time(worker_.pid());
    if (!cpu) return std::nullopt;
    return DiskStore::CaptureWorker{worker_.pid(), *cpu};
  }

  bool an_app_at_work() {
    if (const std::vector<std::int64_t> apps = store_.apps_at_work(); !apps.empty()) return apps_cpu_use_.busy(apps);
    apps_cpu_use_.none_at_work();
    return false;
  }

  // Whether another process waits for the program under way (`starting`, or the one building)
  // or for one queued behind it: then the helper runs at full priority.
  bool someone_waits(const Job* starting = nullptr) const {
    const Job* current = starting ? starting : building_ ? &*building_ : nullptr;
    if (current && store_.key_wanted(current->key)) return true;
    return std::any_of(pending_.begin(), pending_.end(), [&](const Job& job) { return store_.key_wanted(job.key); });
  }

  // A key whose build lock another process holds is being built there now: a run that wanted it
  // before this helper started it builds it itself (helper_wait.cpp). Such a job goes behind the
  // others, which the worker builds meanwhile: waiting behind that run left the worker idle while
  // the run, going on, found each next key not started either and built it too, one step ahead of
  // the helper, so that every key was compiled twice. Once only such jobs are left, the helper waits
  // for the lock (JITCACHE_WAIT_MS) and builds the key unless someone stored it meanwhile. It does
  // not mark the key wanted: the run would then read its binary for the helper, paying the capture.
  void start_next() {
    std::set<Digest128> put_back;  // this round's jobs whose key another process builds now
    while (!pending_.empty()) {
      const bool only_put_back_left = put_back.size() >= pending_.size();
      auto pick = next_job(put_back);
      Job job = std::move(*pick);
      pending_.erase(pick);
      worker_started_ = false;
      const std::chrono::milliseconds wait(only_put_back_left ? settings_.wait_ms : 0);
      const std::error_code busy = store_.lock_key(job.key, wait, &job.lock, DiskStore::Waiter::builds_it_itself);
      if (busy == std::errc::resource_unavailable_try_again && !only_put_back_left) {
        put_back.insert(job.key);
        pending_.push_back(std::move(job));
        continue;
      }
      if (busy) continue;  // another process held it all that time: its builder stores it, or the next run builds it
      if (store_.load(job.key).status == LoadStatus::hit) continue;  // stored by another meanwhile
      if (!send_to_worker(job)) {
        count_helper_failure("capture_helper_failed");
        continue;
      }
      started_ = std::chrono::steady_clock::now();
      building_ = std::move(job);
      return;
    }
  }

  // A worker that died between programs (or in its warm-up) is replaced once; one in the app's PoCL
  // cache, once that folder is gone, by one in a scratch folder.
  bool send_to_worker(const Job& job) {
    const bool in_apps_driver_cache = apps_driver_cache_.usable();
    if (worker_.running() && worker_.in_apps_driver_cache() && !in_apps_driver_cache) worker_.stop();
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!worker_.running() && !worker_.start(base_, in_apps_driver_cache)) return false;
      build_at_full_priority(at_full_priority(&job));
      if (worker_.send(job, app_gone_, store_.key_wanted(job.key), own_cpu_for_next_job())) return true;
      worker_.stop();
    }
    return false;
  }

  // The helper's CPU since the job before (and its start, with the first job).
  HelperCpu own_cpu_for_next_job() {
    const std::chrono::microseconds now = cpu_of(RUSAGE_SELF);
    HelperCpu cpu;
    if (!sent_a_job_) cpu.start_us = static_cast<std::uint64_t>(cpu_at_loop_.count());
    cpu.between_us = static_cast<std::uint64_t>((now - cpu_at_last_job_).count());
    cpu_at_last_job_ = now;
    sent_a_job_ = true;
    return cpu;
  }

  void finish(bool died) {
    if (died) {
      count_helper_failure("capture_helper_died");
      // It may have died anywhere, the store included: whatever it left of the entry goes, so that
      // no app loads bytes no worker saw load back. The build lock is still held here.
      store_.remove(building_->key);
    }
    building_.reset();  // its marker and build lock let go: stored, or given up
    worker_started_ = false;
  }

  ReplayOptions base_;
  AppsDriverCache apps_driver_cache_;
  AppsCpuUse apps_cpu_use_;
  DiskStore& store_;
  const Settings& settings_;
  Worker worker_;
  std::deque<Job> pending_;
  std::optional<Job> building_;
  bool worker_started_ = false;          // the worker said it started building_
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_look_;  // at_full_priority's
  bool beside_no_app_at_work_ = false;               // at full priority for that alone, not for a waiter
  std::chrono::microseconds cpu_at_loop_{0};      // this process's CPU when its loop started
  std::chrono::microseconds cpu_at_last_job_{0};  // ... when it last sent a job
  bool sent_a_job_ = false;
  bool app_gone_ = false;
  KeyLock ending_;  // its ending marker, let go by run_capture_helper after the helper's last write
  const std::string pause_fifo_ = [] {
    const char* fifo = std::getenv("JITCACHE_TEST_HELPER_PAUSE_FIFO");
    return std::string(fifo ? fifo : "");
  }();
  bool gate_passed_ = false;
};

}  // namespace

bool replay_done(const ReplayResult& result) {
  return result.outcome == ReplayResult::Outcome::built || result.outcome == ReplayResult::Outcome::already_warm;
}

namespace {

// At the helper's end, its workers reaped.
void count_own_cpu(std::chrono::microseconds cpu_at_loop) {
  // Its workers count their own steps as they go; the helper its own, and what the OS charged it.
  const std::chrono::microseconds total = cpu_of(RUSAGE_SELF);
  count(std::string(counter::helper_cpu_prefix) + "helper_startup", cpu_at_loop.count());
  count(std::string(counter::helper_cpu_prefix) + "helper", (total - cpu_at_loop).count());
  count(counter::helper_cpu_os_us, (total + cpu_of(RUSAGE_CHILDREN)).count());
  flush_stats(load_settings().dir, std::chrono::milliseconds(1000));
}

}  // namespace

void count_helper_failure(const char* counter_name) {
  count(counter_name);
  flush_stats(load_settings().dir, std::chrono::milliseconds(1000));
}

int run_capture_helper(const ReplayOptions& options, DiskStore& store, const Settings& settings, const HelperWork& work,
                       std::optional<std::filesystem::path> apps_driver_cache) {
  std::chrono::microseconds cpu_at_loop{0};
  int status = 0;
  KeyLock ending;
  {
    Helper helper(options, store, settings, work, std::move(apps_driver_cache));
    status = helper.run();
    cpu_at_loop = helper.cpu_at_loop();
    ending = helper.take_ending();
  }  // its worker reaped: in RUSAGE_CHILDREN below
  count_own_cpu(cpu_at_loop);
  ending.release();  // the last write is done: a wait for this helper ends
  return status;
}

}  // namespace jitcache

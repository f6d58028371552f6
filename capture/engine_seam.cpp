#include "capture/engine_seam.hpp"

#include <algorithm>
#include <cstdlib>

#include "capture/hand_over.hpp"
#include "capture/helper_wait.hpp"

namespace jitcache {
namespace {

HelperPolicy helper_policy(const Settings& settings) {
  HelperPolicy policy;
  policy.time_limit_s = static_cast<unsigned>(std::min<std::uint64_t>(settings.helper_time_limit_s, 1u << 30));
  policy.while_running = settings.helper_start == HelperStart::one_at_a_time;
  return policy;
}

class CaptureHelperSeam final : public CaptureSeam {
 public:
  bool can_hand_over() override { return !helper_binary().empty(); }

  long hand_over(CaptureJob job, const Settings& settings, std::string* why) override {
    return submit_capture(std::move(job), helper_policy(settings), why);
  }

  void expect(const std::string& device_digest, const Settings& settings) override {
    prestart_capture_helper(device_digest, helper_policy(settings));
  }

  std::unique_ptr<CaptureWait> wait_for_key(DiskStore& store, const Digest128& key, const Settings& settings,
                                            bool may_wait_for_captures) override {
    return wait_for_helper(store, key, settings, may_wait_for_captures);
  }

  void flushed(bool at_exit, DiskStore& store) override {
    if (at_exit) finish_captures_at_exit(store);
    // Tests only: the exit flush first waits for this process's helper to end.
    const char* wait = std::getenv("JITCACHE_TEST_WAIT_FOR_HELPERS");
    if (wait && *wait == '1') wait_for_capture_helpers();
  }

  void after_fork() override { forget_captures_after_fork(); }
};

}  // namespace

CaptureSeam& capture_helper_seam() {
  static CaptureHelperSeam* seam = new CaptureHelperSeam;  // never destroyed: the exit flush uses it
  return *seam;
}

}  // namespace jitcache

#include "core/capture_seam.hpp"

#include <atomic>

namespace jitcache {
namespace {

std::atomic<CaptureSeam*> g_linked{nullptr};

}  // namespace

void link_capture(CaptureSeam& seam) { g_linked = &seam; }

CaptureSeam* linked_capture() { return g_linked.load(); }

}  // namespace jitcache

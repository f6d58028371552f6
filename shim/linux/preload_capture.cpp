// The shim's engine hands builds to the capture helper (capture/engine_seam.hpp): linked in when
// the library loads, before the app's first build call.
#include "capture/engine_seam.hpp"

namespace {

__attribute__((constructor)) void link_capture_helper() { jitcache::link_capture(jitcache::capture_helper_seam()); }

}  // namespace

#include "shim/opencl/entry_refresh.hpp"

#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {

bool needs_refresh(const Engine& engine, const std::vector<cl_device_id>& devices, const Lookup& lookup) {
  const Settings& settings = engine.settings();
  if (settings.recapture == Recapture::off || settings.read_only || devices.size() != 1 || !lookup.hit()) return false;
  if (lookup.tier != "disk" && lookup.tier != "remote") return false;
  const ProgramKind kind = lookup.program->kind;
  if (kind != ProgramKind::source && kind != ProgramKind::il && kind != ProgramKind::linked) return false;
  // Refreshed by this process already: the program parked for it is stored when the app is done
  // with it; storing it now, to serve this build, would read it before its kernels ran.
  if (is_key_parked(lookup.key.key)) return false;
  if (!lookup.sidecar.is_object()) return false;
  auto mark = lookup.sidecar.find(kCapturedAfterUseField);
  if (mark != lookup.sidecar.end() && mark->is_boolean() && mark->get<bool>()) return false;
  return settings.recapture == Recapture::always || target_of(devices.front(), next()).pocl;
}

void demote_for_refresh(Lookup& lookup) {
  lookup.verdict = Verdict::miss;
  lookup.reason = "refresh: the " + lookup.tier +
                  " entry was stored before the app used it (without the code the driver generates at the "
                  "first enqueue): rebuilt once, stored when the app is done with it (recapture)";
  lookup.tier.clear();
  lookup.binary.clear();
}

}  // namespace jitcache::opencl

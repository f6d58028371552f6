#include "shim/opencl/entry_refresh.hpp"

#include "shim/opencl/binary_capture.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
bool needs_refresh(const Engine& engine, const std::vector<cl_device_id>& devices, const Lookup& lookup) {
  const Settings& settings = engine.settings();
  if (settings.recapture == Recapture::off || settings.read_only || devices.size() != 1) return false;
  const ProgramKind kind = lookup.program->kind;
  if (kind != ProgramKind::source && kind != ProgramKind::il && kind != ProgramKind::linked) return false;
  // Refreshed by this process already: the program parked for it is stored when the app is done
  // with it; storing it now, to serve this build, would read it before its kernels ran.
  if (is_key_parked(lookup.key.key)) return false;
  // A miss while the refresh's store of the key is under way (refresh_again): built like a refresh.
  if (!lookup.hit()) return lookup.verdict == Verdict::miss && take_refresh_again(lookup.key.key);
  if (lookup.tier != Tier::disk && lookup.tier != Tier::remote) return false;
  if (!lookup.sidecar.is_object()) return false;
  auto mark = lookup.sidecar.find(kCapturedAfterUseField);
  const bool marked = mark != lookup.sidecar.end() && mark->is_boolean() && mark->get<bool>();
  if (marked && !take_refresh_again(lookup.key.key)) return false;
  return settings.recapture == Recapture::always || target_of(devices.front(), next()).pocl;
}

std::shared_ptr<const std::string> demote_for_refresh(Lookup& lookup) {
  if (!lookup.hit()) {
    lookup.reason = "refresh: this process refreshed the key without new code (the app let go of that program "
                    "before running its kernels): built again, stored when the app is done with it (recapture)";
    return nullptr;
  }
  std::shared_ptr<const std::string> earlier;
  if (!lookup.binary.empty()) earlier = std::make_shared<const std::string>(std::move(lookup.binary));
  lookup.verdict = Verdict::miss;
  lookup.reason = std::string("refresh: the ") + tier_name(lookup.tier) +
                  " entry was stored before the app used it (without the code the driver generates at the "
                  "first enqueue): rebuilt once, stored when the app is done with it (recapture)";
  lookup.tier = Tier::none;
  lookup.binary.clear();
  return earlier;
}

}  // namespace jitcache::opencl

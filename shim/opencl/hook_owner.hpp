// Who runs the hooks in this process. A process may load libjitcache.so both ways (LD_PRELOAD and
// OPENCL_LAYERS), possibly as two copies; the rule: an initialised layer owns the hooks, and the
// preload exports then forward to the loader unhooked (which calls the layer). See
// docs/opencl-coverage.md.
#pragma once

namespace jitcache::opencl {

bool layer_owns_hooks();

// This copy's layer, or another copy's (through the exported jitcache_opencl_layer_active), owns
// the hooks from now on.
void note_layer_active();

// Called by clInitLayer: this copy's preload exports (and a preloaded other copy's) stand down.
void claim_hooks_for_layer();

}  // namespace jitcache::opencl

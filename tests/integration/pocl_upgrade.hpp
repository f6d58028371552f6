// A driver upgrade, simulated for real: the PoCL library is copied into a fresh prefix (its device
// and include folders linked back) and OCL_ICD_VENDORS points the ICD loader at the copy, so the
// compiler identity the key sees (the vendor library's path) changes and every entry recorded
// under the real PoCL is stale for it. Also "another machine's driver" in the remote tests.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace jitcache::testing {

// Whether Debian's PoCL layout (library, device dir, share dir) is there to copy.
bool pocl_layout_present();

// Creates the copy under `dir` (once; later calls reuse it) and returns the environment that
// makes the loader use it.
std::map<std::string, std::string> upgraded_pocl(const std::filesystem::path& dir);

}  // namespace jitcache::testing

#include "tools/lib/injection.hpp"

#include "shim/linux/injection_choice.hpp"

#include <cstdlib>
#include <sstream>

#ifndef JITCACHE_INSTALL_LIBDIR
#define JITCACHE_INSTALL_LIBDIR "lib"
#endif

namespace jitcache::tool {

namespace fs = std::filesystem;

std::vector<fs::path> library_candidates(const fs::path& tool_dir) {
  const char* name = "libjitcache.so";
  // Installed in a private dir of the lib dir: it is a preload library and a layer, not a library
  // to link against (docs/packaging.md).
  std::vector<fs::path> candidates = {tool_dir / name, tool_dir / ".." / "shim" / name,
                                      tool_dir / ".." / JITCACHE_INSTALL_LIBDIR / "jitcache" / name};
  if (std::string(JITCACHE_INSTALL_LIBDIR) != "lib") candidates.push_back(tool_dir / ".." / "lib" / "jitcache" / name);
  return candidates;
}

LibraryLookup find_shim_library(const fs::path& tool_dir) {
  LibraryLookup lookup;
  std::error_code ec;
  if (const char* chosen = std::getenv("JITCACHE_LIBRARY"); chosen && *chosen) {
    lookup.tried.push_back(chosen);
    if (fs::is_regular_file(chosen, ec)) {
      lookup.found = fs::absolute(chosen, ec);
    } else {
      lookup.error = std::string("JITCACHE_LIBRARY=") + chosen + " is not a file";
    }
    return lookup;
  }
  for (const fs::path& candidate : library_candidates(tool_dir)) {
    lookup.tried.push_back(candidate.lexically_normal());
    if (fs::is_regular_file(candidate, ec)) {
      lookup.found = fs::weakly_canonical(candidate, ec);
      if (ec) lookup.found = candidate.lexically_normal();
      return lookup;
    }
  }
  std::string tried;
  for (const auto& path : lookup.tried) tried += "\n  " + path.string();
  lookup.error = "cannot find libjitcache.so; looked in:" + tried + "\n(set JITCACHE_LIBRARY to its path)";
  return lookup;
}

InjectionPlan plan_injection(const fs::path& library, const char* current_ld_preload, const char* current_layers,
                             const std::optional<fs::path>& opencl_loader) {
  // ld.so accepts ':' and ' ' as separators; keep the user's entries in their order.
  std::string preload = current_ld_preload ? current_ld_preload : "";
  bool present = false;
  std::string item;
  for (char c : preload + ":") {
    if (c == ':' || c == ' ') {
      present = present || (!item.empty() && fs::path(item) == library);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!present) preload += (preload.empty() ? "" : ":") + library.string();
  InjectionPlan plan{{{"LD_PRELOAD", preload}}, ""};
  jitcache::InjectionPlan opencl = jitcache::plan_injection(library, opencl_loader, current_layers, nullptr);
  if (opencl.method == Injection::icd_layer) plan.env.emplace_back(opencl.variable, opencl.value);
  plan.reason = opencl.reason;
  return plan;
}

fs::path tool_directory() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path(ec) : self.parent_path();
}

}  // namespace jitcache::tool

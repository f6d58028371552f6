#include "tools/lib/injection.hpp"

#include <cstdlib>
#include <sstream>

#ifndef JITCACHE_INSTALL_LIBDIR
#define JITCACHE_INSTALL_LIBDIR "lib"
#endif

namespace jitcache::tool {

namespace fs = std::filesystem;

std::vector<fs::path> library_candidates(const fs::path& tool_dir) {
  const char* name = "libjitcache.so";
  std::vector<fs::path> candidates = {tool_dir / name, tool_dir / ".." / "shim" / name,
                                      tool_dir / ".." / JITCACHE_INSTALL_LIBDIR / name};
  if (std::string(JITCACHE_INSTALL_LIBDIR) != "lib") candidates.push_back(tool_dir / ".." / "lib" / name);
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

InjectionPlan plan_injection(const fs::path& library, const char* current_ld_preload) {
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
  return {{{"LD_PRELOAD", preload}}};
}

fs::path tool_directory() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path(ec) : self.parent_path();
}

}  // namespace jitcache::tool

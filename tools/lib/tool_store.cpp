#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {

std::unique_ptr<DiskStore> open_store(const Settings& settings, bool writable, std::string* error,
                                      bool create_root) {
  StoreLimits limits;
  limits.max_size = settings.max_size;
  limits.max_age_s = settings.max_age_s;
  limits.min_entry_size = settings.min_entry_size;
  limits.max_entry_size = settings.max_entry_size;
  limits.read_only = !writable || settings.read_only;
  limits.create_root = create_root;
  return DiskStore::open(settings.dir, limits, error);
}

std::unique_ptr<DiskStore> open_store_to_list(const Settings& settings, std::string* error) {
  if (!settings.read_only) {
    std::string ignored;
    if (auto store = open_store(settings, /*writable=*/true, &ignored, /*create_root=*/false)) return store;
  }
  return open_store(settings, /*writable=*/false, error);
}

std::optional<EntryInfo> find_entry(DiskStore& store, const std::string& prefix, std::string* error) {
  std::string wanted;
  for (char c : prefix) wanted += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (wanted.size() < 4 || wanted.find_first_not_of("0123456789abcdef") != std::string::npos) {
    *error = "'" + prefix + "' is not a key: give at least 4 hex digits of one (see `jitcache ls`)";
    return std::nullopt;
  }
  std::optional<EntryInfo> found;
  int matches = 0;
  for (EntryInfo& entry : store.list_summaries()) {
    if (entry.key.hex().rfind(wanted, 0) != 0) continue;
    ++matches;
    found = std::move(entry);
  }
  if (matches == 0) *error = "no entry with a key starting with " + wanted;
  if (matches > 1) *error = std::to_string(matches) + " entries have keys starting with " + wanted + "; give more digits";
  if (matches != 1) return std::nullopt;
  // The whole sidecar (the listing has its summary), checked with its entry.
  LoadResult loaded = store.load(found->key);
  if (loaded.status == LoadStatus::hit) found->sidecar = std::move(loaded.sidecar);
  return found;
}

}  // namespace jitcache::tool

// Apps at work on a store (DiskStore::announce_app, apps_at_work): each app process locks a file
// of its own in <root>/locks/apps/, and a capture helper asks each file who holds it. The folder is
// below the root, which only its user may write, so nobody else can add an app or lock one's file;
// what the rest of the system locks costs nothing here.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "store/files/file_ops.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/disk_store_impl.hpp"

namespace jitcache {
namespace {

constexpr std::string_view kAppSuffix = ".app";

// Each app file of another process than this one, with its holder's pid (0: nobody, its app
// ended). Files named for this process's pid are never opened: closing a descriptor of a file
// lets go of this process's lock on it. (A file left by an ended process of the same pid is left
// to another app to remove.)
template <typename Visit>
void visit_other_apps(const store_detail::StoreLayout& layout, Visit visit) {
  std::vector<fileops::DirEntry> names;
  if (layout.dir().list(layout.apps_dir(), &names)) return;
  const std::string own_prefix = std::to_string(fileops::current_process_id()) + "-";
  for (const auto& entry : names) {
    if (!entry.name.ends_with(kAppSuffix) || entry.name.starts_with(own_prefix)) continue;
    const std::filesystem::path file = layout.apps_dir() / entry.name;
    std::int64_t pid = 0;
    if (!fileops::ProcessLock::holder(layout.dir(), file, &pid)) visit(file, pid);
  }
}

}  // namespace

void DiskStore::announce_app() {
  const auto& layout = impl_->layout;
  if (impl_->limits.read_only || impl_->app_presence.held()) return;
  if (layout.dir().make_dir(layout.locks_dir()) || layout.dir().make_dir(layout.apps_dir()) ||
      layout.dir().make_dir(layout.tmp_dir())) {
    return;
  }
  // A file nobody holds stays so: its app locked it before giving it its name there.
  visit_other_apps(layout, [&](const std::filesystem::path& file, std::int64_t pid) {
    if (pid == 0) (void)layout.dir().remove_file(file);
  });
  const std::filesystem::path temp = layout.new_temp_file(kAppSuffix);
  (void)fileops::ProcessLock::create(layout.dir(), temp, layout.apps_dir() / temp.filename(), &impl_->app_presence);
}

std::vector<std::int64_t> DiskStore::apps_at_work() const {
  std::vector<std::int64_t> pids;
  visit_other_apps(impl_->layout, [&](const std::filesystem::path&, std::int64_t pid) {
    if (pid != 0) pids.push_back(pid);
  });
  return pids;
}

}  // namespace jitcache

#include "store/pack/pack_set.hpp"

#include <algorithm>

#include "store/files/file_ops.hpp"
#include "store/files/trusted_file.hpp"

namespace jitcache {
namespace {

constexpr std::uint64_t kMaxKeyFileBytes = 64u << 10;
constexpr const char* kPackSuffix = ".jcpack";

std::vector<std::string> split_paths(std::string_view spec) {
  std::vector<std::string> paths;
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    std::size_t end = spec.find(':', begin);
    if (end == std::string_view::npos) end = spec.size();
    if (end > begin) paths.emplace_back(spec.substr(begin, end - begin));
    begin = end + 1;
  }
  return paths;
}

// A folder's packs, in name order; the folder must pass the trust rule like a shared root.
std::vector<std::filesystem::path> packs_in(const std::filesystem::path& folder, std::vector<std::string>* warnings) {
  std::vector<std::filesystem::path> found;
  fileops::Dir dir;
  std::string why;
  if (fileops::check_ancestors(folder, &why)) {
    warnings->push_back("pack folder " + folder.string() + " refused: " + why);
    return found;
  }
  if (auto error = fileops::Dir::open(folder, &dir)) {
    warnings->push_back("pack folder " + folder.string() + " refused: " + error.message());
    return found;
  }
  std::vector<fileops::DirEntry> entries;
  if (auto error = dir.list(".", &entries)) {
    warnings->push_back("pack folder " + folder.string() + " unreadable: " + error.message());
    return found;
  }
  for (const fileops::DirEntry& entry : entries) {
    const std::string& name = entry.name;
    if (name.size() > std::string_view(kPackSuffix).size() &&
        name.compare(name.size() - std::string_view(kPackSuffix).size(), std::string::npos, kPackSuffix) == 0) {
      found.push_back(folder / name);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

PackTrust load_pack_trust(std::string_view key_files, std::vector<std::string>* warnings) {
  PackTrust trust;
  for (const std::string& file : split_paths(key_files)) {
    trust.required = true;
    fileops::File handle;
    std::string text, error;
    // A key file another user may replace would make their packs trusted: the rule for data.
    if (!resolve_trusted_file(file, &error, &handle)) {
      warnings->push_back("trusted pack key refused: " + error);
      continue;
    }
    if (handle.read_all(&text, kMaxKeyFileBytes)) {
      warnings->push_back("trusted pack key " + file + " unreadable");
      continue;
    }
    std::optional<pack::PublicKey> key = pack::public_key_from_pem(text, &error);
    if (!key) {
      warnings->push_back("trusted pack key " + file + ": " + error);
      continue;
    }
    trust.trusted_keys.push_back(*key);
  }
  return trust;
}

std::unique_ptr<PackSet> PackSet::open(std::string_view spec, const PackTrust& trust,
                                       std::vector<std::string>* warnings) {
  auto set = std::make_unique<PackSet>();
  for (const std::string& path : split_paths(spec)) {
    if (!std::filesystem::path(path).is_absolute()) {  // never the app's working directory's
      warnings->push_back("pack " + path + " refused: not an absolute path");
      continue;
    }
    fileops::FileInfo info;
    if (auto error = fileops::stat_nofollow(path, &info); error || info.kind == fileops::FileKind::missing) {
      warnings->push_back("pack " + path + " not found");
      continue;
    }
    std::vector<std::filesystem::path> files =
        info.kind == fileops::FileKind::directory ? packs_in(path, warnings) : std::vector<std::filesystem::path>{path};
    for (const std::filesystem::path& file : files) {
      std::string error;
      if (auto reader = PackReader::open(file, trust, &error)) set->packs_.push_back(std::move(reader));
      else warnings->push_back("pack left out: " + error);
    }
  }
  return set;
}

PackLookup PackSet::load(const Digest128& key) const {
  PackLookup answer;
  {
    std::lock_guard<std::mutex> lock(refused_mutex_);
    if (refused_.count(key)) return answer;
  }
  for (const auto& pack : packs_) {
    LoadResult result = pack->load(key);
    if (result.status == LoadStatus::miss) continue;
    if (result.status == LoadStatus::hit || answer.result.status == LoadStatus::miss) {
      answer.result = std::move(result);
      answer.pack = pack->path();
    }
    if (answer.result.status == LoadStatus::hit) break;
  }
  return answer;
}

void PackSet::refuse(const Digest128& key) {
  std::lock_guard<std::mutex> lock(refused_mutex_);
  refused_.insert(key);
}

}  // namespace jitcache

#include "store/pack/pack_members.hpp"

#include <algorithm>

#include "store/pack/pack_format.hpp"

namespace jitcache::pack {
namespace {

bool is_hex_name(std::string_view name, std::string_view folder, std::string_view suffix) {
  if (!name.starts_with(folder) || !name.ends_with(suffix)) return false;
  const std::string_view digits = name.substr(folder.size(), name.size() - folder.size() - suffix.size());
  return digits.size() == 32 && digits.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool is_layout_name(std::string_view name) {
  return name == kIndexMember || name == kSignatureMember || name == kManifestMember ||
         is_hex_name(name, kEntriesFolder, ".bin") || is_hex_name(name, kEntriesFolder, ".json") ||
         is_hex_name(name, kInputsFolder, ".rec");
}

// A regular file: ustar's '0', or the old NUL.
bool is_regular(char type) { return type == '0' || type == '\0'; }

}  // namespace

std::vector<std::string> member_problems(const PackReader& pack, std::size_t limit) {
  std::vector<std::string> problems;
  std::uint64_t offset = 0;
  std::string block;
  while (problems.size() < limit) {
    if (!pack.read_bytes(offset, kBlock, &block)) {
      problems.push_back("the archive ends at byte " + std::to_string(offset) + " without its end marker");
      break;
    }
    if (std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; })) break;  // end of archive
    std::optional<TarMember> member = parse_tar_header(block);
    if (!member) {
      problems.push_back("no valid tar header at byte " + std::to_string(offset));
      break;
    }
    if (!is_regular(block[156])) {
      problems.push_back("member '" + member->name + "' is not a regular file (type '" + std::string(1, block[156]) +
                         "'): `tar xf` would make it a link or a device");
    } else if (!is_layout_name(member->name)) {
      problems.push_back("member '" + member->name + "' is not part of a pack's layout" +
                         (member->name.find("..") != std::string::npos || member->name.starts_with("/")
                              ? ": `tar xf` would write outside the folder"
                              : ""));
    }
    offset += kBlock + padded(member->size);
  }
  return problems;
}

}  // namespace jitcache::pack

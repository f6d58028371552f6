// Reading one entry and deciding whether it can be trusted: its files must be regular files the
// trust rule accepts (fileops::check_trusted), in shard folders it accepts. Format 2 (one entry
// file, store/local/entry_file.hpp): the header's checksums, lengths and key must match; format 1 (a
// binary and its sidecar): the binary must match the sidecar. In both the sidecar must be a JSON
// object naming this entry's key, with the binary's binary_size and binary_xxh3_64.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "store/files/file_ops.hpp"
#include "store/local/entry_file.hpp"
#include "store/local/store_layout.hpp"

namespace jitcache::store_detail {

inline constexpr const char* kSizeField = "binary_size";
inline constexpr const char* kChecksumField = "binary_xxh3_64";
// The key the entry was stored under: a pair copied or linked under another key's name is refused.
inline constexpr const char* kKeyField = "key";

// Adds the integrity fields that make the sidecar a commit marker for exactly this binary and key.
void add_integrity_fields(nlohmann::json* sidecar, std::string_view key_hex, std::string_view binary);

// Serialises a sidecar; invalid UTF-8 in strings (a build log) is replaced, never thrown.
std::string sidecar_text(const nlohmann::json& sidecar);

struct EntryCheck {
  enum class State {
    missing,   // no entry file, no sidecar: not committed
    ok,        // sidecar and binary agree
    bad,       // present but untrustworthy: quarantine material
    io_error,  // could not be read (permissions, EIO, out of fds): not the entry's fault
  };
  State state = State::missing;
  std::string reason;
  std::string binary;
  nlohmann::json sidecar;
  std::shared_ptr<const std::string> answers;  // !whole_sidecar: the "answers" text, left out of `sidecar`
  fileops::File commit_file;  // the entry file (or format 1 sidecar), kept open on ok: a hit touches it
};

// `whole_sidecar` false (the engine's hit path): the sidecar's `components` (the key's recorded
// inputs, the program's text included: most of its bytes) are left out of the parse and read as
// null, and its `answers` are cut out as their text into `answers` (store/local/pack_sidecar.hpp); a hit
// does not use the components, and every check that decides whether the binary is served (key,
// size, XXH3-64) is made either way. Tools read sidecars whole.
EntryCheck check_entry(const StoreLayout& layout, const EntryPaths& paths, bool whole_sidecar = true);

}  // namespace jitcache::store_detail

// Recorded inputs in the store (docs/store-format.md, "Recorded inputs"):
//
//   <root>/inputs/<d0d1>/<digest>.rec   one record per distinct program, named by the XXH3-128 of
//                                       its bytes; the sidecars of the entries built from it name
//                                       it ("inputs": digest), so N devices or compiler versions of
//                                       one program share one record.
//
// Records count in the size record's bytes (not in its entry count). A record no committed
// sidecar names is removed by the maintenance pass once it is older than the stale-file age
// (its entry may still be on its way: written by a background store or a capture helper).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "hashing/digest.hpp"
#include "store/file_ops.hpp"

namespace jitcache::store_detail {

class StoreLayout;

inline std::filesystem::path inputs_dir() { return "inputs"; }
std::filesystem::path input_record_path(const Digest128& digest);

struct InputRecordFile {
  Digest128 digest;
  std::filesystem::path path;  // relative to the root
  fileops::FileInfo info;
};

// Every well-named regular record file; anything else under inputs/ is left out (and not counted).
std::vector<InputRecordFile> scan_input_records(const StoreLayout& layout);

}  // namespace jitcache::store_detail

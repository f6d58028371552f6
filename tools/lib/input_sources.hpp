// Where `jitcache warm` finds recorded programs and their input records (store_inputs): the local
// store, the remote tier (store/remote/remote_programs.hpp), or packs that carry their inputs (`--pack`). A source
// lists what it holds; any source holding an input record can put it in the local store, where the
// `jitcache replay` child reads it, so the replay never depends on where a record came from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "store/local/disk_store.hpp"

namespace jitcache::tool {

struct RecordedProgram {
  std::string source;         // the source's name()
  std::string key;            // the recorded entry's key (hex)
  std::string inputs;         // its input record's digest (hex)
  std::string device_digest;  // its key's device component
  std::string device;         // the device's name
  std::string created_by;     // the executable that built it
  std::int64_t used_ns = 0;   // last use (local store) or publication (remote)
  nlohmann::json components;  // the recorded key's components: name -> digest
};

// An entry a source holds that cannot be replayed (no input record), or a record it refused.
struct Unusable {
  std::string source;
  std::string name;  // key, or the remote value's name
  std::string reason;
};

class InputSource {
 public:
  virtual ~InputSource() = default;
  virtual const char* name() const = 0;
  // What it holds; entries without inputs and refused records go to `unusable`. "" or why the
  // listing stopped early (then what was seen before is returned).
  virtual std::string programs(std::vector<RecordedProgram>* programs, std::vector<Unusable>* unusable) = 0;
  // Makes the input record `digest` available in `store` (a no-op when it is there): "" or why not.
  virtual std::string provide(const Digest128& digest, DiskStore& store) = 0;
};

std::unique_ptr<InputSource> local_source(DiskStore& store);
// The packs of `paths` (':'-separated files or folders), opened with the pack tier's trust rules;
// nullptr with `why` set when one cannot be opened or trusted.
std::unique_ptr<InputSource> pack_source(const std::string& paths, const Settings& settings, std::string* why);
// nullptr when no remote is configured, or (`why` set) when it is configured but unusable.
std::unique_ptr<InputSource> remote_source(const Settings& settings, std::string* why);

}  // namespace jitcache::tool

// The one "lookup -> build -> store" engine shared by every API adapter. Adapters describe a build
// as ProgramInputs + TargetIdentity, ask for a Lookup per device, and end each Lookup with exactly
// one of loaded() / rejected()+built() / built() / failed(). No OpenCL or Level Zero types here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "hashing/build_inputs.hpp"
#include "hashing/key.hpp"

namespace jitcache {

class DiskStore;
class RemoteTier;

enum class Verdict { hit, miss, stale, uncacheable, failed };
const char* to_string(Verdict verdict);

struct Timings {
  std::uint64_t hash_us = 0;    // header scan + key derivation
  std::uint64_t lookup_us = 0;  // store read + verification
  std::uint64_t load_us = 0;    // driver loading the cached binary
  std::uint64_t build_us = 0;   // the real build
  std::uint64_t store_us = 0;   // background store
};

// What the adapter read back after a successful real build.
struct BuildResult {
  std::string binary;
  std::vector<std::string> kernel_names;
  std::string build_log;
  std::uint64_t build_us = 0;
};

// ProgramInputs completed by Engine::prepare, shared by the lookups of every device.
struct PreparedProgram {
  std::shared_ptr<const ProgramInputs> inputs;
  std::uint64_t prepare_us = 0;
  std::string uncacheable;  // non-empty: do not cache, this is why
};

struct Lookup {
  std::shared_ptr<const ProgramInputs> program;
  std::string device;  // human-readable device name, for traces and sidecars
  KeyRecord key;
  Verdict verdict = Verdict::miss;
  std::string tier;    // "disk" on a hit
  std::string reason;  // for stale / uncacheable / failed / corrupt misses
  std::string binary;  // the cached binary on a hit
  nlohmann::json remote;  // what the remote tier did (null: not asked)
  nlohmann::json sidecar;
  Timings timings;
  bool ended = false;

  bool hit() const { return verdict == Verdict::hit; }
};

class Engine {
 public:
  // The process-wide engine, or nullptr when the cache is disabled or unusable (warned once).
  static Engine* instance();

  const Settings& settings() const { return settings_; }

  // Adds what the adapter cannot know: codegen environment variables and, for source programs,
  // the #include'd headers (resolved through -I options and `working_dir`), and says when the
  // program must not be cached (e.g. it expands __TIME__).
  PreparedProgram prepare(ProgramInputs program, const std::filesystem::path& working_dir) const;

  Lookup lookup(const PreparedProgram& program, const TargetIdentity& target, std::string device);

  // The cached binary served the app.
  void loaded(Lookup& lookup, std::uint64_t load_us);
  // The driver refused the cached binary: the entry is dropped; a real build follows (built/failed).
  void rejected(Lookup& lookup, const std::string& reason);
  // A real build succeeded: store the binary in the background.
  void built(Lookup& lookup, BuildResult result);
  // The real build failed (the app gets the driver's error); nothing is stored.
  void failed(Lookup& lookup, const std::string& reason);
  // The build cannot be cached at all.
  void uncacheable(const ProgramInputs& program, const std::string& device, const std::string& reason);

  // Waits (bounded) for background stores, then saves the stats. Called at exit too.
  void flush();

 private:
  Engine(Settings settings, std::unique_ptr<DiskStore> store);
  void end(Lookup& lookup);  // counts, writes the trace
  nlohmann::json trace_record(const Lookup& lookup) const;

  Settings settings_;
  std::shared_ptr<DiskStore> store_;
  std::shared_ptr<RemoteTier> remote_;  // null: no remote configured
  std::vector<std::string> env_patterns_;
};

}  // namespace jitcache

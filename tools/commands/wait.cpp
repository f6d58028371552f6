// jitcache wait [--timeout DURATION] [--json]: until no capture is in flight (docs/cli.md), so
// that a script or CI job sees the whole cache its app runs built (e.g. before `pack create` on
// another machine, or an archive of the cache folder). It says what it waits for (each key and
// how long its app's own build took) and then what came of it (stored, with the kernels, or not).
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/entry_view.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct WaitOptions {
  std::string timeout;  // empty: the capture_wait setting
  bool json = false;
};

// One capture waited for: its key, what its marker said of the app's build, and how it ended.
struct AwaitedCapture {
  Digest128 key;
  std::optional<std::chrono::microseconds> app_build;
  bool stored = false;
  nlohmann::json kernel_names = nlohmann::json::array();
};

std::string short_key(const Digest128& key) { return key.hex().substr(0, 8); }

// "waiting for 2 captures (programs an app built, stored by its capture helper): 3fa2c1d0 built in
// 1.85 s, 91bc0a2e built in 250 ms..."
std::string waiting_line(const std::vector<AwaitedCapture>& captures, std::size_t in_flight) {
  std::string line = "waiting for " + std::to_string(in_flight) + (in_flight == 1 ? " capture" : " captures") +
                     " (programs an app built, stored by its capture helper)";
  bool first = true;
  for (const AwaitedCapture& capture : captures) {
    line += (first ? ": " : ", ") + short_key(capture.key);
    if (capture.app_build) {
      line += " built in " + format_duration_us(static_cast<std::uint64_t>(capture.app_build->count()));
    }
    first = false;
  }
  return line + "...";
}

// "stored 2 of 2 in 1.8 s: 3fa2c1d0 (vector_add, saxpy), 91bc0a2e (add_offset)"
std::string outcome_line(const std::vector<AwaitedCapture>& captures, std::uint64_t waited_us) {
  std::size_t stored = 0;
  std::string named;
  for (const AwaitedCapture& capture : captures) {
    if (!capture.stored) continue;
    ++stored;
    named += (named.empty() ? ": " : ", ") + short_key(capture.key) + " (" +
             entry_kernels(nlohmann::json{{"kernel_names", capture.kernel_names}}, 60) + ")";
  }
  std::string line = "stored " + std::to_string(stored) + " of " + std::to_string(captures.size()) + " in " +
                     format_duration_us(waited_us) + named;
  if (stored < captures.size()) {
    line += "; not stored: ";
    bool first = true;
    for (const AwaitedCapture& capture : captures) {
      if (capture.stored) continue;
      line += (first ? "" : ", ") + short_key(capture.key);
      first = false;
    }
    line += " (given up or still in flight: `jitcache explain --last` and the traces say why)";
  }
  return line;
}

int wait_for_cache(const WaitOptions& options) {
  const Settings settings = load_settings();
  std::optional<std::uint64_t> bound_s = options.timeout.empty() ? settings.capture_wait_s : parse_duration_s(options.timeout);
  if (!bound_s) return report_error("--timeout: not a duration: '" + options.timeout + "' (e.g. 30s, 10m, 0)");
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  const std::size_t in_flight = store->captures_in_flight();
  std::vector<AwaitedCapture> captures;
  if (in_flight > 0) {
    for (const Digest128& key : store->capture_keys_in_flight()) {
      captures.push_back({key, store->capture_progress(key).build_time});
    }
    if (!options.json) {
      std::printf("%s\n", waiting_line(captures, in_flight).c_str());
      std::fflush(stdout);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  // Even with no capture in flight: a helper whose app has gone may still be writing its counts.
  const std::size_t left = wait_for_captures(*store, std::chrono::seconds(*bound_s));
  const auto waited_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
  std::size_t stored = 0;
  for (AwaitedCapture& capture : captures) {
    if (!store->contains(capture.key)) continue;
    LoadResult loaded = store->load(capture.key, /*whole_sidecar=*/false);
    if (loaded.status != LoadStatus::hit) continue;
    capture.stored = true;
    ++stored;
    if (auto names = loaded.sidecar.find("kernel_names"); loaded.sidecar.is_object() && names != loaded.sidecar.end()) {
      capture.kernel_names = *names;
    }
  }
  if (options.json) {
    nlohmann::json waited = nlohmann::json::array();
    for (const AwaitedCapture& capture : captures) {
      waited.push_back({{"key", capture.key.hex()},
                        {"app_build_us", capture.app_build ? nlohmann::json(capture.app_build->count()) : nlohmann::json()},
                        {"stored", capture.stored},
                        {"kernel_names", capture.kernel_names}});
    }
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"in_flight_before", in_flight},
                {"in_flight", left}, {"settled", left == 0}, {"stored", stored}, {"waited_us", waited_us},
                {"captures", waited}});
  } else if (in_flight == 0 && left == 0) {
    std::printf("settled: no capture in flight in %s\n", settings.dir.string().c_str());
  } else {
    std::printf("%s\n", outcome_line(captures, waited_us).c_str());
    if (left > 0) {
      std::printf("%s (gave up after %s)\n", in_flight_note(left).c_str(), format_duration_us(*bound_s * 1000000).c_str());
    } else {
      std::printf("settled: no capture in flight in %s\n", settings.dir.string().c_str());
    }
  }
  return left == 0 ? 0 : 1;
}

}  // namespace

Command add_wait_command(CLI::App& app) {
  auto options = std::make_shared<WaitOptions>();
  CLI::App* cli = app.add_subcommand("wait", "wait until the capture helpers have stored every entry in flight");
  cli->add_option("--timeout", options->timeout, "give up after this long (default: the capture_wait setting, 10m)");
  cli->add_flag("--json", options->json, "machine-readable output (docs/cli.md)");
  return {cli, [options] { return wait_for_cache(*options); }};
}

}  // namespace jitcache::tool

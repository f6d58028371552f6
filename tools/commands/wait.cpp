// jitcache wait [--timeout DURATION] [--json]: until no capture is in flight (docs/cli.md), so
// that a script or CI job sees the whole cache its app runs built (e.g. before `pack create` on
// another machine, or an archive of the cache folder).
#include <cstdio>
#include <memory>

#include "tools/commands/command.hpp"
#include "tools/lib/captures.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/tool_store.hpp"

namespace jitcache::tool {
namespace {

struct WaitOptions {
  std::string timeout;  // empty: the capture_wait setting
  bool json = false;
};

int wait_for_cache(const WaitOptions& options) {
  const Settings settings = load_settings();
  std::optional<std::uint64_t> bound_s = options.timeout.empty() ? settings.capture_wait_s : parse_duration_s(options.timeout);
  if (!bound_s) return report_error("--timeout: not a duration: '" + options.timeout + "' (e.g. 30s, 10m, 0)");
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  if (!store) return report_error(error);
  const std::size_t in_flight = store->captures_in_flight();
  const std::size_t left = in_flight == 0 ? 0 : wait_for_captures(*store, std::chrono::seconds(*bound_s));
  if (options.json) {
    print_json({{"schema", kJsonSchemaVersion}, {"dir", settings.dir.string()}, {"in_flight_before", in_flight},
                {"in_flight", left}, {"settled", left == 0}});
  } else if (left > 0) {
    std::printf("%s (gave up after %s)\n", in_flight_note(left).c_str(), format_duration_us(*bound_s * 1000000).c_str());
  } else {
    std::printf("settled: no capture in flight in %s%s\n", settings.dir.string().c_str(),
                in_flight ? (" (waited for " + std::to_string(in_flight) + ")").c_str() : "");
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

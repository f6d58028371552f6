// jitcache doctor [--json] [PROGRAM]: the first thing to run when nothing hits. Checks the cache
// root, the drivers, the injection, the remote, traces and the last lookups; each finding says
// what to do about it. Exit 1 when a check failed (a "warn" does not fail).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#ifndef _WIN32
#include <dlfcn.h>
#include <elf.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#endif

#include "core/remote_tier.hpp"
#include "core/settings.hpp"
#include "core/stats.hpp"
#include "core/trace.hpp"
#include "hashing/key.hpp"
#include "store/files/json_file.hpp"
#include "store/files/root_check.hpp"
#include "store/files/user_path.hpp"
#include "store/tiers/tiers.hpp"
#include "tools/commands/command.hpp"
#include "tools/lib/format.hpp"
#include "tools/lib/injection.hpp"
#include "tools/lib/tool_store.hpp"
#include "tools/lib/version.hpp"
#ifndef _WIN32
#include "core/library_check.hpp"
#include "tools/lib/visible_drivers.hpp"
#endif

namespace jitcache::tool {
namespace {

namespace fs = std::filesystem;

struct Finding {
  std::string check;
  std::string status;  // ok, info, warn, fail
  std::string detail;  // may span lines
  std::string fix;
  nlohmann::json identity = nullptr;  // "compiler" findings: what the key gets (docs/cli.md)
};

using Findings = std::vector<Finding>;

void check_root(const Settings& settings, Findings* out) {
  std::string error;
  std::unique_ptr<DiskStore> store = open_store(settings, /*writable=*/false, &error);
  std::error_code ec;
  if (!fs::exists(settings.dir, ec)) {
    out->push_back({"cache root", "info", settings.dir.string() + " does not exist yet",
                    "nothing to do: the first cached build creates it (0700)"});
    return;
  }
  if (!store) {
    out->push_back({"cache root", "fail", settings.dir.string() + ": " + error,
                    "use a directory you own that nobody else can write (chmod 700), or remove it and let "
                    "jitcache create it"});
    return;
  }
  out->push_back({"cache root", "ok", settings.dir.string() + " (owned by you, private)", ""});
#ifndef _WIN32
  struct statvfs space {};
  if (::statvfs(settings.dir.c_str(), &space) == 0) {
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize;
    const bool low = free_bytes < 2 * settings.max_entry_size && free_bytes < (1ull << 30);
    out->push_back({"free space", low ? "warn" : "ok", format_size(free_bytes) + " free",
                    low ? "free some space or point JITCACHE_DIR elsewhere: stores fail on a full disk" : ""});
  }
  struct statfs fs_info {};
  if (::statfs(settings.dir.c_str(), &fs_info) == 0) {
    constexpr long kNfs = 0x6969, kTmpfs = 0x01021994;
    if (fs_info.f_type == kNfs) {
      out->push_back({"filesystem", "warn", "NFS: locks and renames are slow, and flock may be unsupported",
                      "prefer a local disk, and share between machines with JITCACHE_REMOTE (docs/remote.md)"});
    } else if (fs_info.f_type == kTmpfs) {
      out->push_back({"filesystem", "warn", "tmpfs: the cache is lost at every reboot",
                      "set JITCACHE_DIR to a directory on a disk"});
    } else {
      out->push_back({"filesystem", "ok", "a local filesystem", ""});
    }
  }
#endif
  if (settings.disabled) {
    out->push_back({"enabled", "fail", "JITCACHE_DISABLE is set: every build goes to the driver",
                    "unset JITCACHE_DISABLE (and remove disable from jitcache.conf)"});
  }
  for (const std::string& problem : settings.problems) {
    out->push_back({"settings", "warn", problem + " (the default is used)", "fix the value: jitcache config"});
  }
}

#ifndef _WIN32
std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

// What the key of a build on `device` gets as compiler identity: the libraries (build-id, else size
// and mtime) and the version strings, with the component's digest as traces record it.
void add_identity(const char* api, const VisibleDevice& device, Findings* out) {
  const KeyComponent compiler = compiler_component(device.identity);
  std::string detail = device.name + " on " + device.platform + ": key part " + compiler.digest.hex().substr(0, 16);
  for (const LibraryIdentity& library : device.identity.compiler.libraries) {
    detail += "\n" + library.path + (library.build_id.empty() ? "  size " + std::to_string(library.size) +
                                                                      ", mtime_ns " + std::to_string(library.mtime_ns)
                                                                : "  build-id " + library.build_id);
  }
  for (const auto& [name, value] : device.identity.compiler.versions) {
    detail += "\n" + name + ": " + value;
  }
  std::string status = "ok", fix;
  if (!device.unusable.empty()) {
    status = "warn";
    detail += "\nnot cached: " + device.unusable;
    fix = "builds on this device go to the driver every time; report it with this output";
  } else if (device.identity.compiler.libraries.empty()) {
    status = "warn";
    fix = "no driver library was found: only version strings tell driver updates apart, report it";
  }
  out->push_back({"compiler", status, detail, fix,
                  {{"api", api},
                   {"platform", device.platform},
                   {"device", device.name},
                   {"digest", compiler.digest.hex()},
                   {"value", compiler.value}}});
}

// The OpenCL platforms and devices the ICD loader offers, asked through dlopen as an app would.
void check_opencl(Findings* out) {
  const VisibleDrivers drivers = visible_opencl_drivers();
  if (!drivers.problem.empty()) {
    out->push_back({"OpenCL", "warn", drivers.problem,
                    "apt install ocl-icd-libopencl1 and a driver (e.g. pocl-opencl-icd); check /etc/OpenCL/vendors "
                    "and OCL_ICD_VENDORS"});
    return;
  }
  out->push_back({"OpenCL", "ok", std::to_string(drivers.platforms.size()) + " platform(s): " + join(drivers.platforms), ""});
  for (const VisibleDevice& device : drivers.devices) add_identity("opencl", device, out);
}

void check_level_zero(Findings* out) {
  const VisibleDrivers drivers = visible_level_zero_drivers();
  if (!drivers.problem.empty()) {
    out->push_back({"Level Zero", "info", drivers.problem,
                    "only needed for Level Zero apps: apt install libze1 and your GPU's Level Zero driver"});
    return;
  }
  out->push_back({"Level Zero", "ok", std::to_string(drivers.platforms.size()) + " driver(s)", ""});
  for (const VisibleDevice& device : drivers.devices) add_identity("level_zero", device, out);
}

// The DT_NEEDED entries of an ELF64 program, or nullopt when it is not one.
std::optional<std::vector<std::string>> needed_libraries(const std::string& image) {
  if (image.size() < sizeof(Elf64_Ehdr) || image.compare(0, 4, ELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64) {
    return std::nullopt;
  }
  auto at = [&](std::uint64_t offset, std::uint64_t size) { return offset <= image.size() && size <= image.size() - offset; };
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof header);
  std::vector<Elf64_Phdr> segments;
  for (int i = 0; i < header.e_phnum; ++i) {
    std::uint64_t offset = header.e_phoff + static_cast<std::uint64_t>(i) * sizeof(Elf64_Phdr);
    if (!at(offset, sizeof(Elf64_Phdr))) return std::nullopt;
    Elf64_Phdr segment;
    std::memcpy(&segment, image.data() + offset, sizeof segment);
    segments.push_back(segment);
  }
  auto file_offset = [&](std::uint64_t address) -> std::optional<std::uint64_t> {
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type == PT_LOAD && address >= segment.p_vaddr && address < segment.p_vaddr + segment.p_filesz) {
        return address - segment.p_vaddr + segment.p_offset;
      }
    }
    return std::nullopt;
  };
  std::vector<std::string> needed;
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_DYNAMIC || !at(segment.p_offset, segment.p_filesz)) continue;
    std::vector<std::uint64_t> name_offsets;
    std::optional<std::uint64_t> strings;
    for (std::uint64_t offset = segment.p_offset; offset + sizeof(Elf64_Dyn) <= segment.p_offset + segment.p_filesz;
         offset += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, image.data() + offset, sizeof entry);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_NEEDED) name_offsets.push_back(entry.d_un.d_val);
      if (entry.d_tag == DT_STRTAB) strings = file_offset(entry.d_un.d_ptr);
    }
    if (!strings) return needed;
    for (std::uint64_t name : name_offsets) {
      if (!at(*strings + name, 1)) continue;
      needed.emplace_back(image.c_str() + *strings + name);
    }
  }
  return needed;
}

// Programs larger than this are not read (their headers are all the check needs; a bound keeps
// a device or a huge file from filling memory).
constexpr std::uint64_t kMaxProgramBytes = 1ull << 30;

void check_program(const fs::path& program, Findings* out) {
  std::string image, error;
  if (!read_user_file(program, kMaxProgramBytes, &image, &error)) {
    out->push_back({"program", "fail", "cannot read " + error, "name the program's file (an ELF executable)"});
    return;
  }
  std::optional<std::vector<std::string>> needed = needed_libraries(image);
  if (!needed) {
    out->push_back({"program", "info", program.string() + " is not an ELF64 program (a script?)",
                    "use jitcache run, which sets both LD_PRELOAD and OPENCL_LAYERS"});
    return;
  }
  bool opencl = false, level_zero = false;
  for (const std::string& name : *needed) {
    opencl = opencl || name.starts_with("libOpenCL.so");
    level_zero = level_zero || name.starts_with("libze_loader.so");
  }
  if (opencl || level_zero) {
    out->push_back({"program", "ok",
                    program.string() + " links " + (opencl ? "libOpenCL" : "") + (opencl && level_zero ? " and " : "") +
                        (level_zero ? "libze_loader" : "") + " directly: LD_PRELOAD sees its calls",
                    ""});
  } else {
    out->push_back({"program", "warn",
                    program.string() + " does not link libOpenCL or libze_loader directly: it loads them at run "
                                       "time (dlopen, a plugin, Python), which LD_PRELOAD alone may not see",
                    "use jitcache run (it adds the OpenCL layer, OPENCL_LAYERS) or set OPENCL_LAYERS yourself"});
  }
}
#endif

void check_injection(Findings* out) {
#ifdef _WIN32
  out->push_back({"library", "info", "jitcache run injects jitcache.dll through jitcache-run.exe", "docs/windows.md"});
#else
  LibraryLookup library = find_shim_library(tool_directory());
  if (!library.found) {
    out->push_back({"library", "fail", "libjitcache.so not found: " + library.error,
                    "set JITCACHE_LIBRARY to its path, or reinstall jitcache"});
    return;
  }
  out->push_back({"library", "ok", library.found->string(), ""});
  // Apps reach packs and the remote tier through the library next to it (store/tiers/tiers.hpp).
  // The verdict the shim reaches before it would dlopen it (core/library_check.hpp).
  const fs::path tiers = library.found->parent_path() / kTierPluginFile;
  std::error_code ignored;
  std::string refused;
  if (!fs::exists(tiers, ignored)) {
    out->push_back({"tiers library", "warn",
                    tiers.string() + " is missing: apps run without packs (JITCACHE_PACKS) and the remote tier "
                                     "(JITCACHE_REMOTE)",
                    "reinstall jitcache, or build the `jitcache` target: it puts libjitcache-tiers.so next to "
                    "libjitcache.so"});
  } else if (check_loadable_library(tiers, &refused)) {
    out->push_back({"tiers library", "ok", tiers.string(), ""});
  } else {
    out->push_back({"tiers library", "fail",
                    "refused: " + refused + ": apps run without packs (JITCACHE_PACKS) and the remote tier "
                                            "(JITCACHE_REMOTE)",
                    "reinstall jitcache, or rebuild the `jitcache` target, in folders only you or root can "
                    "write (docs/reliability.md, \"Trust model\")"});
  }
  std::optional<fs::path> loader;
  // The loader an app would get, so that the layer check looks at the same file.
  if (void* handle = ::dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL)) {
    Dl_info info{};
    if (void* symbol = ::dlsym(handle, "clGetPlatformIDs"); symbol && ::dladdr(symbol, &info) && info.dli_fname) {
      loader = fs::path(info.dli_fname);
    }
  }
  InjectionPlan plan = plan_injection(*library.found, nullptr, nullptr, loader);
  bool layers = false;
  for (const auto& [name, value] : plan.env) layers = layers || name == "OPENCL_LAYERS";
  out->push_back({"OpenCL layer", layers ? "ok" : "warn", plan.reason,
                  layers ? "" : "apps that dlopen libOpenCL are seen only through the layer: use ocl-icd >= 2.3"});
#endif
}

// One configured remote: does it answer (a lookup of a key nobody has), then what its scheme can
// tell of itself (RemoteClient::check). `check`: "remote", or "remote 2" and on for the later ones.
void check_one_remote(const RemoteConfig& config, bool read_only, const std::string& check, Findings* out) {
  std::unique_ptr<RemoteClient> client = open_remote(config);
  const auto started = std::chrono::steady_clock::now();
  RemoteResult probe = client->load(Digest128{0, 0});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  const std::string where = client->describe();
  const bool answers = probe.status == RemoteStatus::miss || probe.status == RemoteStatus::ok;
  if (answers) {
    out->push_back({check, "ok", where + " answers in " + std::to_string(ms.count()) + " ms" +
                                      (read_only ? " (read-only)" : ""), ""});
  } else {
    out->push_back({check, "fail", where + ": " + to_string(probe.status) + ": " + probe.reason,
                    std::string(config.endpoint->scheme->advice)});
    return;
  }
  for (RemoteFinding& finding : client->check(read_only)) {
    out->push_back({check + " " + finding.aspect, finding.verdict, finding.detail, finding.advice});
  }
}

void check_remote(const Settings& settings, Findings* out) {
  if (settings.remote.empty()) {
    out->push_back({"remote", "info", "no remote tier (JITCACHE_REMOTE unset)", ""});
    return;
  }
  std::vector<RemoteConfig> configs;
  bool read_only = false;
  std::chrono::milliseconds lease_wait{0};
  std::string problem = remote_configs_from(settings, linked_tiers().remote_schemes(), &configs, &read_only, &lease_wait);
  std::string ca_problem;
  if (!trusted_remote_ca_file(settings, &ca_problem)) {
    out->push_back({"remote CA file", "fail", ca_problem + ": HTTPS remotes are not asked",
                    "keep the CA file in a folder only you or root can write, owned by you or root, not "
                    "writable by group or others (docs/remote.md, Trust model)"});
  }
  if (configs.empty()) {
    out->push_back({"remote", "fail", problem, "fix JITCACHE_REMOTE (docs/remote.md)"});
    return;
  }
  if (!problem.empty()) out->push_back({"remote settings", "warn", problem, "fix the remote_* settings (docs/settings.md)"});
  for (std::size_t i = 0; i < configs.size(); ++i) {
    check_one_remote(configs[i], read_only, i == 0 ? "remote" : "remote " + std::to_string(i + 1), out);
  }
}

void check_traces(const Settings& settings, std::size_t last, Findings* out) {
  if (!settings.trace) {
    out->push_back({"traces", "info", "off", "JITCACHE_TRACE=1 records why each lookup hit or missed"});
  } else {
    out->push_back({"traces", "ok", "on, in " + settings.trace_dir.string(), ""});
  }
  // Read by the rules the library writes them by (core/trace.hpp): no symlinks, the user's folder.
  std::string problem;
  std::vector<fs::path> traces = trace_records(settings.trace_dir, &problem);
  if (!problem.empty()) {
    out->push_back({"traces", settings.trace ? "fail" : "warn", problem,
                    "traces are neither written nor read there until it is fixed"});
  }
  std::reverse(traces.begin(), traces.end());  // newest first
  if (traces.size() > last) traces.resize(last);
  for (const fs::path& path : traces) {
    const std::optional<nlohmann::json> read = read_json_object(path);
    if (!read) continue;
    const nlohmann::json& trace = *read;
    const std::string verdict = trace.value("verdict", std::string("?"));
    const std::string reason = trace.value("reason", std::string());
    out->push_back({"last lookup", verdict == "hit" ? "ok" : "info",
                    verdict + (reason.empty() ? "" : ": " + reason) + " (" + path.filename().string() + ")",
                    verdict == "miss" ? "jitcache explain " + path.string() : ""});
  }
  CounterMap stats = read_stats(settings.dir);
  auto value = [&](const char* name) { return stats.count(name) ? stats.at(name) : 0; };
  const std::int64_t hits = value(counter::hit_memory) + value(counter::hit_disk) + value(counter::hit_remote);
  out->push_back({"statistics", "info",
                  std::to_string(hits) + " hits, " + std::to_string(value(counter::miss)) + " misses, " +
                      std::to_string(value(counter::error)) + " errors so far",
                  ""});
}

int run_doctor(bool json, const std::string& program) {
  const Settings settings = load_settings();
  Findings findings;
  findings.push_back({"version", "info", version_text(), ""});
  check_root(settings, &findings);
#ifndef _WIN32
  check_opencl(&findings);
  check_level_zero(&findings);
  if (!program.empty()) check_program(program, &findings);
#else
  (void)program;  // the ELF and dlopen checks are Linux-only
#endif
  check_injection(&findings);
  check_remote(settings, &findings);
  check_traces(settings, 5, &findings);

  bool failed = false;
  for (const Finding& finding : findings) failed = failed || finding.status == "fail";
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Finding& f : findings) {
      nlohmann::json item = {{"check", f.check}, {"status", f.status}, {"detail", f.detail}, {"fix", f.fix}};
      if (!f.identity.is_null()) item["identity"] = f.identity;
      list.push_back(std::move(item));
    }
    print_json({{"schema", kJsonSchemaVersion}, {"ok", !failed}, {"checks", list}});
  } else {
    for (const Finding& f : findings) {
      std::string detail = f.detail;  // continuation lines line up under the first
      for (std::size_t at = detail.find('\n'); at != std::string::npos; at = detail.find('\n', at + 1)) {
        detail.insert(at + 1, 22, ' ');
      }
      std::printf("%-5s %-15s %s\n", f.status.c_str(), f.check.c_str(), detail.c_str());
      if (!f.fix.empty()) std::printf("      %-15s -> %s\n", "", f.fix.c_str());
    }
    std::printf("%s\n", failed ? "Problems found (fail above)." : "No problem found.");
  }
  return failed ? 1 : 0;
}

}  // namespace

Command add_doctor_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto program = std::make_shared<std::string>();
  CLI::App* cli = app.add_subcommand("doctor", "check the setup and explain what stops hits (exit 1 on problems)");
  cli->add_option("program", *program, "an app to check: does LD_PRELOAD see its OpenCL calls?");
  cli->add_flag("--json", *json, "machine-readable output (docs/cli.md)");
  return {cli, [json, program] { return run_doctor(*json, *program); }};
}

}  // namespace jitcache::tool

// Packs (docs/pack-format.md), two numbers for docs/benchmarks.md (every entry carries a real
// PoCL sidecar, bench/data/pocl_example_sidecar.json):
//  1. lookup latency in a pack of N entries (default 10 000): every key once in random order plus
//     as many absent keys, each timed alone, in a pack read once before (and, apart, the first read
//     of a pack just written); p50/p99/p99.9/max of hits and misses, the share of
//     hits during which the thread was switched out, the undisturbed hits' p50/p99 and page faults
//     per hit; and what each step of a hit (checksums, sidecar parse, answers decode) costs alone,
//     in the same run. Hits alternate between what the OpenCL adapter does at a hit now (`hit_*`:
//     the recorded answers kept as text, decoded only when the app asks) and before (`eager_hit_*`:
//     decoded at the hit).
//  2. building that pack vs copying the same bytes: (a) write_pack from entries in memory vs
//     writing the same sidecar and binary bytes into one file with the same fsync; (b) the whole
//     `pack create` path (list + checked load from a real store + write_pack) vs `cp -r` of that
//     store followed by sync.
//  3. (with 2b) a disk store hit of the same entries, alternating: sidecar parsed whole vs the hit
//     fields with the answers decoded (before) vs the hit fields with the answers kept as text (now).
// Usage: pack_bench WORK_DIR [ENTRIES] [BINARY_BYTES] [lookups]. Prints CSV rows (bench/pack.sh).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "hashing/bounded_json.hpp"
#include "shim/opencl/lazy_answers.hpp"
#include "shim/opencl/recorded_answers.hpp"
#include "store/local/disk_store.hpp"
#include "store/local/entry_check.hpp"
#include "store/local/pack_sidecar.hpp"
#include "store/pack/pack_reader.hpp"
#include "store/pack/pack_writer.hpp"

namespace fs = std::filesystem;
using namespace jitcache;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This process's CPU time (user + system), seconds: on a shared machine the wall time of a write
// carries other processes' load and the device's writeback; the CPU time is the work itself.
double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

// A real sidecar (bench/data/pocl_example_sidecar.json: the example app's program on PoCL 3.1,
// 4.6 KB compact, components 2.7 KB of it), compiled in; each entry gets its own key and binary.
const nlohmann::json& real_sidecar() {
  static const nlohmann::json sidecar = nlohmann::json::parse(
#include "real_sidecar.inc"
  );
  return sidecar;
}

PackEntry make_entry(int i, std::size_t binary_bytes, std::mt19937_64& random) {
  PackEntry entry;
  entry.key = xxh3_128("bench entry " + std::to_string(i));
  entry.binary.resize(binary_bytes);
  for (std::size_t at = 0; at + 8 <= binary_bytes; at += 8) {
    const std::uint64_t word = random();
    std::memcpy(entry.binary.data() + at, &word, 8);
  }
  entry.sidecar = real_sidecar();
  store_detail::add_integrity_fields(&entry.sidecar, entry.key.hex(), entry.binary);
  return entry;
}

// The median time of `work` over `runs` runs, µs: what one step of a hit costs on its own.
template <typename Work>
double median_us(int runs, Work work) {
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t = Clock::now();
    work();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

std::string private_key_pem() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return text;
}

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
};
Percentiles percentiles(std::vector<double> us) {
  if (us.empty()) return {};
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
  return {at(0.5), at(0.99), at(0.999), us.back()};
}

// This thread's context switches (voluntary + involuntary) and minor + major page faults so far:
// read around each timed lookup, outside its timed span, to tell a slow lookup that was switched
// out (another process ran) or faulted from one that was slow by itself.
struct Disturbances {
  long switches = 0, faults = 0;
};
Disturbances disturbances_now() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return {usage.ru_nvcsw + usage.ru_nivcsw, usage.ru_minflt + usage.ru_majflt};
}

// Hits timed alone, split by what disturbed them.
struct HitTimes {
  Percentiles all;
  Percentiles undisturbed;   // hits during which this thread was never switched out
  double switched_share = 0;  // % of hits during which it was
  double faults_per_hit = 0;
};

// The same bytes the pack holds, written into one file in 1 MiB writes, then fsync.
double copy_bytes(const fs::path& file, const std::vector<PackEntry>& entries, double* cpu_s) {
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string buffer;
  auto flush = [&] {
    if (::write(fd, buffer.data(), buffer.size()) != static_cast<ssize_t>(buffer.size())) std::abort();
    buffer.clear();
  };
  for (const PackEntry& entry : entries) {
    buffer += entry.sidecar.dump() + "\n";  // as write_pack writes it (compact)
    buffer += entry.binary;
    if (buffer.size() >= (1u << 20)) flush();
  }
  flush();
  ::fsync(fd);
  ::close(fd);
  *cpu_s = cpu_seconds() - cpu_start;
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pack_bench WORK_DIR [ENTRIES] [BINARY_BYTES]\n");
    return 2;
  }
  const fs::path work = argv[1];
  const int count = argc > 2 ? std::atoi(argv[2]) : 10000;
  const std::size_t binary_bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 16384;
  fs::create_directories(work);
  std::mt19937_64 random(42);
  std::vector<PackEntry> entries;
  for (int i = 0; i < count; ++i) entries.push_back(make_entry(i, binary_bytes, random));

  // 2a. write_pack vs copying the same bytes (both from memory, both fsynced).
  const fs::path pack = work / "bench.jcpack";
  double copy_cpu_s = 0, copy_after_cpu_s = 0;
  const double copy_s = copy_bytes(work / "copy.bin", entries, &copy_cpu_s);
  PackWriteOptions options;
  options.producer = "pack_bench";
  std::string error;
  const double write_cpu_start = cpu_seconds();
  auto start = Clock::now();
  if (!write_pack(pack, entries, options, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  const double write_s = seconds_since(start);
  const double write_cpu_s = cpu_seconds() - write_cpu_start;
  // The copy once more after the pack: whichever runs second competes with the first one's
  // writeback, so the baseline is the mean of a copy before and a copy after.
  const double copy_after_s = copy_bytes(work / "copy2.bin", entries, &copy_after_cpu_s);
  const double copy_mean_s = (copy_s + copy_after_s) / 2;
  const double copy_cpu_mean_s = (copy_cpu_s + copy_after_cpu_s) / 2;

  // 2b. the pack create path from a real store vs cp -r + sync of that store (skipped with a 4th
  // argument "lookups": size sweeps of the lookup numbers).
  const bool lookups_only = argc > 4 && std::string(argv[4]) == "lookups";
  double cp_s = 0, create_s = 0;
  Percentiles disk_whole, disk_fields, disk_lazy;
  if (!lookups_only) {
  const fs::path root = work / "store";
  fs::remove_all(root);
  StoreLimits limits;
  limits.max_size = 0;
  auto store = DiskStore::open(root, limits, &error);
  if (!store) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  for (const PackEntry& entry : entries) store->save(entry.key, entry.binary, entry.sidecar);
  limits.read_only = true;  // as `pack create` opens it: no LRU touch
  auto reader_store = DiskStore::open(root, limits, &error);
  const fs::path copied = work / "store-copy";
  fs::remove_all(copied);
  start = Clock::now();
  const std::string cp = "cp -r '" + root.string() + "' '" + copied.string() + "' && sync";
  if (std::system(cp.c_str()) != 0) return 1;
  cp_s = seconds_since(start);
  start = Clock::now();
  std::vector<PackEntry> loaded;
  for (const EntryInfo& info : reader_store->list()) {
    LoadResult entry = reader_store->load(info.key);
    if (entry.status == LoadStatus::hit) loaded.push_back({info.key, std::move(entry.sidecar), std::move(entry.binary)});
  }
  if (!write_pack(work / "from-store.jcpack", loaded, options, &error)) return 1;
  create_s = seconds_since(start);
  // 3. A disk hit of the same entries, alternating key by key: the sidecar parsed whole (as every
  // disk hit did before; the adapter then read the answers from that tree, not timed here) vs the
  // hit fields + the answers' text decoded as the OpenCL adapter decodes it.
  // And (now) the hit fields with the answers kept as text, decoded only if the app asks.
  std::vector<double> whole_us, fields_us, lazy_us;
  for (std::size_t i = 0; i < entries.size() && i < 3000; ++i) {
    const auto t = Clock::now();
    bool ok = false;
    if (i % 3 == 0) {
      ok = reader_store->load(entries[i].key).status == LoadStatus::hit;
    } else {
      LoadResult hit = reader_store->load(entries[i].key, /*whole_sidecar=*/false);
      auto answers = std::make_shared<const opencl::LazyAnswers>(hit.answers, nullptr);
      ok = hit.status == LoadStatus::hit && (i % 3 == 2 || answers->get());
    }
    (i % 3 == 0 ? whole_us : i % 3 == 1 ? fields_us : lazy_us)
        .push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
    if (!ok) return 1;
  }
  disk_whole = percentiles(whole_us);
  disk_fields = percentiles(fields_us);
  disk_lazy = percentiles(lazy_us);
  }

  // 1. lookups, unsigned then signed (a signed pack's binaries are checked by SHA-256).
  std::vector<std::pair<Digest128, bool>> keys;
  for (const PackEntry& entry : entries) keys.emplace_back(entry.key, true);
  for (int i = 0; i < count; ++i) keys.emplace_back(xxh3_128("absent " + std::to_string(i)), false);
  std::shuffle(keys.begin(), keys.end(), random);
  // Hits alternate, one by one in the random order, between what a hit costs now (`lazy`: the
  // adapter keeps the answers' text and decodes it only when the app asks, shim/opencl/lazy_answers.hpp)
  // and what it cost before (`eager`: decoded at the hit), so that both see the same load.
  auto time_lookups = [&](HitTimes* lazy, HitTimes* eager, Percentiles* misses) {
    auto reader = PackReader::open(pack, PackTrust{}, &error);
    if (!reader) return false;
    struct Samples {
      std::vector<double> all, undisturbed;
      long switched = 0, faults = 0;
    } samples[2];
    std::vector<double> miss_us;
    std::size_t hit_count = 0;
    for (const auto& [key, present] : keys) {
      const bool decode_now = present && hit_count++ % 2 == 1;
      const Disturbances before = disturbances_now();
      const auto t = Clock::now();
      LoadResult result = reader->load(key);
      std::string problem;
      std::shared_ptr<const opencl::LazyAnswers> answers;
      if (result.status == LoadStatus::hit) {
        answers = std::make_shared<const opencl::LazyAnswers>(result.answers, nullptr);
        if (decode_now && !answers->get()) {
          error = "entry " + key.hex() + ": recorded answers refused";
          return false;
        }
      }
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t).count();
      const Disturbances after = disturbances_now();
      if ((result.status == LoadStatus::hit) != present) {
        error = "wrong answer for " + key.hex();
        return false;
      }
      if (!present) {
        miss_us.push_back(us);
        continue;
      }
      Samples& variant = samples[decode_now ? 1 : 0];
      variant.all.push_back(us);
      variant.faults += after.faults - before.faults;
      if (after.switches != before.switches) ++variant.switched;
      else variant.undisturbed.push_back(us);
    }
    HitTimes* times[2] = {lazy, eager};
    for (int v = 0; v < 2; ++v) {
      const double n = static_cast<double>(samples[v].all.size());
      times[v]->all = percentiles(samples[v].all);
      times[v]->undisturbed = percentiles(samples[v].undisturbed);
      times[v]->switched_share = 100.0 * static_cast<double>(samples[v].switched) / n;
      times[v]->faults_per_hit = static_cast<double>(samples[v].faults) / n;
    }
    *misses = percentiles(miss_us);
    return true;
  };
  // Each pack is timed twice, in two random orders. The first pass reads pages the writer has just
  // written: the kernel moves each page to its active list at that first read (a few µs, once per
  // page, for any reader: bench/notes/pack.md). The second pass is a pack read before, as by an
  // earlier run of the app, and is what the target is judged by.
  HitTimes first_hits, first_signed_hits, first_eager_hits, first_eager_signed_hits;
  HitTimes hits, signed_hits, eager_hits, eager_signed_hits;
  Percentiles misses, signed_misses;
  auto time_twice = [&](HitTimes* first, HitTimes* first_eager, HitTimes* again, HitTimes* again_eager,
                        Percentiles* again_misses) {
    Percentiles first_misses;
    if (!time_lookups(first, first_eager, &first_misses)) return false;
    std::shuffle(keys.begin(), keys.end(), random);
    return time_lookups(again, again_eager, again_misses);
  };
  if (!time_twice(&first_hits, &first_eager_hits, &hits, &eager_hits, &misses) ||
      !sign_pack(pack, private_key_pem(), &error) ||
      !time_twice(&first_signed_hits, &first_eager_signed_hits, &signed_hits, &eager_signed_hits, &signed_misses)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  // What the steps of a hit cost on their own, in this run (medians of 2000): the checksums of one
  // binary, and the sidecar's checksum and parse (of the fields a hit reads, as a hit parses it).
  const std::string& binary = entries.front().binary;
  const std::string sidecar_text = entries.front().sidecar.dump() + "\n";
  // Before: the hit fields with the answers, parsed into an nlohmann tree (what a hit did until
  // the answers were carried as text, docs/design-decisions.md).
  std::vector<std::string_view> hit_fields_with_answers = pack::kHitFields;
  hit_fields_with_answers.push_back(pack::kAnswersTextField);
  const std::string with_answers = pack::only_top_level_values(sidecar_text, hit_fields_with_answers).value_or(sidecar_text);
  const std::string answers_text = entries.front().sidecar["answers"].dump();
  volatile std::uint64_t sink = 0;
  const double sha256_binary_us = median_us(2000, [&] { sink = sink + pack::sha256(binary)[0]; });
  const double xxh3_128_binary_us = median_us(2000, [&] { sink = sink + xxh3_128(binary).low; });
  const double xxh3_64_binary_us = median_us(2000, [&] { sink = sink + xxh3_64(binary); });
  const double sha256_sidecar_us = median_us(2000, [&] { sink = sink + pack::sha256(sidecar_text)[0]; });
  const double xxh3_128_sidecar_us = median_us(2000, [&] { sink = sink + xxh3_128(sidecar_text).low; });
  const double parse_sidecar_us = median_us(2000, [&] {  // as a hit parses it now
    std::optional<pack::HitFields> split = pack::hit_fields(sidecar_text, pack::kHitFields, pack::kAnswersTextField);
    sink = sink + split->fields.size() + split->as_text->size();
  });
  const double parse_with_answers_us = median_us(2000, [&] {
    sink = sink + parse_untrusted_json(with_answers, store_detail::kMaxSidecarBytes).size();
  });
  std::string problem;
  const double decode_answers_us = median_us(2000, [&] {
    sink = sink + opencl::parse_answers(&answers_text, &problem)->kernels.size();
  });
  const double tree_answers_us = median_us(2000, [&] {  // the nlohmann tree of the answers alone
    sink = sink + parse_untrusted_json(answers_text, store_detail::kMaxSidecarBytes).size();
  });

  const double pack_mb = static_cast<double>(fs::file_size(pack)) / 1e6;
  const double index_mb = static_cast<double>(pack::kIndexHeaderSize + count * pack::kRecordSize) / 1e6;

  // CSV rows: binary_bytes,metric,value,unit (bench/pack.sh turns them into the report's table).
  auto row = [&](const char* metric, double value, const char* unit) {
    std::printf("%zu,%s,%.3f,%s\n", binary_bytes, metric, value, unit);
  };
  row("entries", count, "count");
  row("pack_size", pack_mb, "MB");
  row("index_size", index_mb, "MB");
  for (const auto& [prefix, times] : {std::pair<std::string, const HitTimes*>{"hit", &hits},
                                      {"signed_hit", &signed_hits},
                                      {"eager_hit", &eager_hits},
                                      {"eager_signed_hit", &eager_signed_hits}}) {
    row((prefix + "_p50").c_str(), times->all.p50, "us");
    row((prefix + "_p99").c_str(), times->all.p99, "us");
    row((prefix + "_p999").c_str(), times->all.p999, "us");
    row((prefix + "_max").c_str(), times->all.max, "us");
    row((prefix + "_switched_share").c_str(), times->switched_share, "percent");
    row((prefix + "_undisturbed_p50").c_str(), times->undisturbed.p50, "us");
    row((prefix + "_undisturbed_p99").c_str(), times->undisturbed.p99, "us");
    row((prefix + "_faults_per_hit").c_str(), times->faults_per_hit, "count");
  }
  for (const auto& [prefix, times] : {std::pair<std::string, const HitTimes*>{"first_read_hit", &first_hits},
                                      {"first_read_signed_hit", &first_signed_hits}}) {
    row((prefix + "_p50").c_str(), times->all.p50, "us");
    row((prefix + "_p99").c_str(), times->all.p99, "us");
    row((prefix + "_undisturbed_p99").c_str(), times->undisturbed.p99, "us");
  }
  row("miss_p50", misses.p50, "us");
  row("miss_p99", misses.p99, "us");
  row("miss_max", misses.max, "us");
  row("sidecar_bytes", static_cast<double>(sidecar_text.size()), "B");
  row("sha256_binary_p50", sha256_binary_us, "us");
  row("xxh3_128_binary_p50", xxh3_128_binary_us, "us");
  row("xxh3_64_binary_p50", xxh3_64_binary_us, "us");
  row("sha256_sidecar_p50", sha256_sidecar_us, "us");
  row("xxh3_128_sidecar_p50", xxh3_128_sidecar_us, "us");
  row("parse_sidecar_p50", parse_sidecar_us, "us");
  row("parse_sidecar_with_answers_p50", parse_with_answers_us, "us");
  row("decode_answers_p50", decode_answers_us, "us");
  row("answers_tree_p50", tree_answers_us, "us");
  row("write_pack", write_s, "s");
  row("copy_before", copy_s, "s");
  row("copy_after", copy_after_s, "s");
  row("write_vs_copy", write_s / copy_mean_s, "ratio");
  row("write_pack_cpu", write_cpu_s, "s");
  row("copy_cpu_mean", copy_cpu_mean_s, "s");
  row("write_vs_copy_cpu", write_cpu_s / copy_cpu_mean_s, "ratio");
  if (!lookups_only) {
    row("create_from_store", create_s, "s");
    row("cp_store", cp_s, "s");
    row("create_vs_cp", create_s / cp_s, "ratio");
    row("disk_hit_whole_p50", disk_whole.p50, "us");
    row("disk_hit_whole_p99", disk_whole.p99, "us");
    row("disk_hit_fields_decoded_p50", disk_fields.p50, "us");
    row("disk_hit_fields_decoded_p99", disk_fields.p99, "us");
    row("disk_hit_fields_lazy_p50", disk_lazy.p50, "us");
    row("disk_hit_fields_lazy_p99", disk_lazy.p99, "us");
  }
  fs::remove_all(work);
  return 0;
}

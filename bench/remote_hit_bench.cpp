// Remote hit latency per backend against a local disk hit, at fixed binary sizes: the store-level
// read a lookup does (disk: DiskStore::load; remote: RemoteClient::load, i.e. the GET and the
// record's checks), on one warm client per backend, the backends interleaved round by round so
// that the machine's load hits them alike. bench/remote_latency.sh starts the servers and runs it.
//
//   [JITCACHE_REMOTE_CA_FILE=cert.pem] remote_hit_bench DIR ROUNDS URL...
//   (URL: redis://..., http(s)://..., file:///dir)
// Prints one JSON object: {"<backend> <size>": [µs per round...], ...}.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/local/disk_store.hpp"
#include "store/tiers/tiers.hpp"

int main(int argc, char** argv) {
  using namespace jitcache;
  if (argc < 4) {
    std::fprintf(stderr, "usage: remote_hit_bench DIR ROUNDS URL...\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const int rounds = std::stoi(argv[2]);
  std::string error;
  std::unique_ptr<DiskStore> disk = DiskStore::open(dir, StoreLimits{}, &error);
  if (!disk) {
    std::fprintf(stderr, "store: %s\n", error.c_str());
    return 1;
  }
  struct Backend {
    std::string name;
    std::unique_ptr<RemoteClient> client;
  };
  std::vector<Backend> remotes;
  for (int i = 3; i < argc; ++i) {
    RemoteConfig config;
    std::unique_ptr<RemoteEndpoint> endpoint = parse_remote_url(linked_tiers().remote_schemes(), argv[i], &error);
    if (!endpoint) {
      std::fprintf(stderr, "%s: %s\n", argv[i], error.c_str());
      return 1;
    }
    const std::string name(endpoint->scheme->name);
    // The scheme's own settings (S3's endpoint and keys) from their JITCACHE_* variables.
    for (std::string_view key : endpoint->scheme->settings) {
      std::string variable = "JITCACHE_";
      for (char c : key) variable += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (const char* value = std::getenv(variable.c_str())) config.scheme_settings[std::string(key)] = value;
    }
    config.endpoint = std::move(endpoint);
    config.connect_timeout = std::chrono::seconds(5);
    config.command_timeout = std::chrono::seconds(5);
    if (const char* ca = std::getenv("JITCACHE_REMOTE_CA_FILE")) config.ca_file = ca;  // the script's certificate
    remotes.push_back({name, open_remote(config)});
  }
  const nlohmann::json sidecar = {{"schema", 1}, {"api", "opencl"}, {"kernel_names", {"k"}}};
  std::map<std::string, std::vector<double>> times;
  const std::vector<std::size_t> sizes = {4096, 65536};
  for (std::size_t size : sizes) {
    const Digest128 key{size, 42};
    const std::string binary(size, 'b');
    disk->save(key, binary, sidecar);
    for (Backend& remote : remotes) {
      if (remote.client->save(key, binary, sidecar).status != RemoteStatus::ok) {
        std::fprintf(stderr, "%s: cannot store\n", remote.name.c_str());
        return 1;
      }
      remote.client->load(key);  // connected, warm
    }
  }
  auto timed = [](auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    bool hit = call();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return hit ? us : -1.0;
  };
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t size : sizes) {
      const Digest128 key{size, 42};
      const std::string label = " " + std::to_string(size / 1024) + " KiB";
      times["disk" + label].push_back(timed([&] { return disk->load(key, false).status == LoadStatus::hit; }));
      for (Backend& remote : remotes) {
        times[remote.name + label].push_back(timed([&] { return remote.client->load(key).status == RemoteStatus::ok; }));
      }
    }
  }
  std::printf("%s\n", nlohmann::json(times).dump().c_str());
  return 0;
}

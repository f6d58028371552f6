// JITCACHE_REMOTE: one URL, or several asked in order ('|' or white space between them). What a
// URL means is its scheme's business: a scheme is one registration (a RemoteScheme row, listed in
// store/remote/remote_schemes.cpp) whose parser reads the URL into the scheme's own endpoint, and
// that endpoint opens the scheme's client. The engine reaches the rows through the tiers' factory
// (store/tiers/tiers.hpp), so nothing here knows a scheme by name.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jitcache {

struct RemoteConfig;
class RemoteClient;
struct RemoteScheme;

// Where one remote is, in its scheme's own fields (each scheme derives its endpoint from this).
class RemoteEndpoint {
 public:
  virtual ~RemoteEndpoint() = default;
  // The URL without its secrets, for logs, traces and doctor; one remote written two ways gives
  // one name (a remote listed twice is asked once).
  virtual std::string redacted() const = 0;
  // Whether its server is believed through remote_ca_file (HTTPS): such a remote is left out when
  // that file fails the trust rule.
  virtual bool trusts_ca_file() const { return false; }
  // The scheme's client of this remote (`config.endpoint` is this endpoint).
  virtual std::unique_ptr<RemoteClient> open(RemoteConfig config) const = 0;

  const RemoteScheme* scheme = nullptr;  // the row that read it (parse_remote_url sets it)
};

// One registration: everything jitcache knows of a scheme is here or in its own files.
struct RemoteScheme {
  std::string_view name;     // "redis": `jitcache --version` lists it as "remote-redis"
  std::string_view prefix;   // what its URLs start with ("redis://", "file:")
  std::string_view example;  // one URL of its form (docs and the registry's test parse it)
  // Reads what follows the prefix; null and a one-line reason when it is not the scheme's form.
  std::unique_ptr<RemoteEndpoint> (*parse)(std::string_view rest, std::string* error);
  // The settings of its own (rows of core/settings.cpp, each secret one a Secret row, shown as
  // ***): the engine hands their values to its client in RemoteConfig::scheme_settings.
  std::span<const std::string_view> settings;
  std::string_view advice;  // what to check when a remote of this scheme does not answer
};
using RemoteSchemes = std::span<const RemoteScheme* const>;

// The scheme whose prefix the URL starts with reads it. Null and a one-line reason when no row's
// prefix fits (the reason lists the registered schemes) or the row refuses it.
std::unique_ptr<RemoteEndpoint> parse_remote_url(RemoteSchemes schemes, std::string_view url, std::string* error);

// JITCACHE_REMOTE as a list: "url|url", or separated by white space (a URL has neither). Empty
// entries are skipped; the first bad URL makes the whole list refused (nullopt, its reason).
std::optional<std::vector<std::shared_ptr<const RemoteEndpoint>>> parse_remote_urls(RemoteSchemes schemes,
                                                                                    std::string_view urls,
                                                                                    std::string* error);

}  // namespace jitcache

#include "store/remote_api/remote_url.hpp"

#include <algorithm>

namespace jitcache {
namespace {

std::string registered_names(RemoteSchemes schemes) {
  std::string names;
  for (const RemoteScheme* scheme : schemes) names += (names.empty() ? "" : ", ") + std::string(scheme->name);
  return names;
}

}  // namespace

std::unique_ptr<RemoteEndpoint> parse_remote_url(RemoteSchemes schemes, std::string_view url, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  for (const RemoteScheme* scheme : schemes) {
    if (!url.starts_with(scheme->prefix)) continue;
    std::unique_ptr<RemoteEndpoint> endpoint = scheme->parse(url.substr(scheme->prefix.size()), error);
    if (endpoint) endpoint->scheme = scheme;
    return endpoint;
  }
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    std::string examples;
    for (const RemoteScheme* row : schemes) examples += (examples.empty() ? "" : ", ") + std::string(row->example);
    *error = "not a URL (expected one of: " + examples + ")";
  } else {
    *error = "unsupported scheme '" + std::string(url.substr(0, scheme)) + "' (this build knows " +
             registered_names(schemes) + ")";
  }
  return nullptr;
}

std::optional<std::vector<std::shared_ptr<const RemoteEndpoint>>> parse_remote_urls(RemoteSchemes schemes,
                                                                                    std::string_view urls,
                                                                                    std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  std::vector<std::shared_ptr<const RemoteEndpoint>> endpoints;
  constexpr std::string_view kSeparators = "| \t\n\r";
  for (std::size_t start = 0; start < urls.size();) {
    std::size_t end = std::min(urls.find_first_of(kSeparators, start), urls.size());
    if (end > start) {
      std::unique_ptr<RemoteEndpoint> endpoint = parse_remote_url(schemes, urls.substr(start, end - start), error);
      if (!endpoint) {
        if (endpoints.size() > 0 || end < urls.size()) *error = "remote " + std::to_string(endpoints.size() + 1) + ": " + *error;
        return std::nullopt;
      }
      endpoints.push_back(std::move(endpoint));
    }
    start = end + 1;
  }
  if (endpoints.empty()) {
    *error = "no URL";
    return std::nullopt;
  }
  return endpoints;
}

}  // namespace jitcache

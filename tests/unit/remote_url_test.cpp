// Tests for store/remote_url: the accepted JITCACHE_REMOTE forms and clear refusals.
#include <gtest/gtest.h>

#include "core/settings.hpp"
#include "store/remote/file_scheme.hpp"
#include "store/remote/http_scheme.hpp"
#include "store/remote/redis_scheme.hpp"
#include "store/remote/remote_schemes.hpp"

namespace jitcache {
namespace {

std::unique_ptr<RemoteEndpoint> parsed(const std::string& url) {
  std::string error;
  std::unique_ptr<RemoteEndpoint> endpoint = parse_remote_url(remote_schemes(), url, &error);
  EXPECT_TRUE(endpoint) << url << ": " << error;
  return endpoint;
}

// The URL read by its scheme, as that scheme's endpoint (an empty one when it was refused or
// read by another scheme, which the test then sees).
template <class Endpoint>
Endpoint parsed_as(const std::string& url) {
  std::unique_ptr<RemoteEndpoint> endpoint = parsed(url);
  const auto* typed = dynamic_cast<const Endpoint*>(endpoint.get());
  EXPECT_TRUE(typed) << url << " was read by another scheme";
  return typed ? *typed : Endpoint{};
}
RedisEndpoint redis(const std::string& url) { return parsed_as<RedisEndpoint>(url); }
HttpEndpoint http(const std::string& url) { return parsed_as<HttpEndpoint>(url); }
FileEndpoint file(const std::string& url) { return parsed_as<FileEndpoint>(url); }

std::string refusal(const std::string& url) {
  std::string error;
  EXPECT_FALSE(parse_remote_url(remote_schemes(), url, &error)) << url;
  return error;
}

TEST(RemoteUrl, HostAndPortWithDefaults) {
  RedisEndpoint plain = redis("redis://cache.example.org");
  EXPECT_FALSE(plain.unix_socket);
  EXPECT_EQ(plain.address.host, "cache.example.org");
  EXPECT_EQ(plain.address.port, 6379);
  EXPECT_EQ(plain.db, 0);
  EXPECT_TRUE(plain.credentials.password.empty());

  RedisEndpoint full = redis("redis://10.0.0.5:7000/3");
  EXPECT_EQ(full.address.host, "10.0.0.5");
  EXPECT_EQ(full.address.port, 7000);
  EXPECT_EQ(full.db, 3);
}

TEST(RemoteUrl, CredentialsArePercentDecodedAndRedacted) {
  RedisEndpoint user = redis("redis://builder:p%40ss%3Aword@host:6380");
  EXPECT_EQ(user.credentials.user, "builder");
  EXPECT_EQ(user.credentials.password, "p@ss:word");
  EXPECT_EQ(user.redacted(), "redis://builder:***@host:6380");

  RedisEndpoint password_only = redis("redis://:secret@host");
  EXPECT_TRUE(password_only.credentials.user.empty());
  EXPECT_EQ(password_only.credentials.password, "secret");
  EXPECT_EQ(password_only.redacted().find("secret"), std::string::npos);

  EXPECT_EQ(redis("redis://secret@host").credentials.password, "secret");  // as redis-cli -u reads it
}

TEST(RemoteUrl, Ipv6HostInBrackets) {
  RedisEndpoint v6 = redis("redis://[::1]:6390/1");
  EXPECT_EQ(v6.address.host, "::1");
  EXPECT_EQ(v6.address.port, 6390);
  EXPECT_EQ(v6.db, 1);
  EXPECT_EQ(redis("redis://[fe80::2]").address.port, 6379);
}

TEST(RemoteUrl, UnixSocketForms) {
  RedisEndpoint triple = redis("redis+unix:///run/redis/redis.sock");
  EXPECT_TRUE(triple.unix_socket);
  EXPECT_EQ(triple.socket_path, "/run/redis/redis.sock");
  EXPECT_EQ(redis("redis+unix:/tmp/r.sock").socket_path, "/tmp/r.sock");
  RedisEndpoint with_db = redis("redis+unix://:pw@/tmp/r.sock?db=2");
  EXPECT_EQ(with_db.credentials.password, "pw");
  EXPECT_EQ(with_db.socket_path, "/tmp/r.sock");
  EXPECT_EQ(with_db.db, 2);
}

TEST(RemoteUrl, BadUrlsAreRefusedWithAReason) {
  EXPECT_NE(refusal("memcached://host:11211").find("unsupported scheme"), std::string::npos);
  EXPECT_NE(refusal("host:6379").find("not a URL"), std::string::npos);
  EXPECT_NE(refusal("redis://host:notaport").find("bad port"), std::string::npos);
  EXPECT_NE(refusal("redis://host:0").find("bad port"), std::string::npos);
  EXPECT_NE(refusal("redis://host:70000").find("bad port"), std::string::npos);
  EXPECT_NE(refusal("redis://host/x").find("database"), std::string::npos);
  EXPECT_NE(refusal("redis://:6379").find("no host"), std::string::npos);
  EXPECT_NE(refusal("redis://[::1:6379").find("IPv6"), std::string::npos);
  EXPECT_NE(refusal("redis://u:%zz@host").find("percent"), std::string::npos);
  EXPECT_NE(refusal("redis+unix://relative.sock").find("absolute"), std::string::npos);
  EXPECT_NE(refusal("redis+unix:///tmp/r.sock?timeout=3").find("db=N"), std::string::npos);
}

// Issue 28.5: `jitcache config` split at the first '@' while the parser takes the last, so a raw
// '@' in a password showed its tail. No piece of the password the parser reads is shown.
TEST(RemoteUrl, TheConfigShowsNoPieceOfAPasswordWithARawAt) {
  for (const std::string url : {"redis://alice:p@ss@host:6380", "redis://:top@secret@@host", "redis://s3cr@t@host/2",
                                "redis+unix://bob:pw@with@/run/redis.sock"}) {
    const RedisEndpoint endpoint = redis(url);
    const std::string shown = redacted_setting("remote", url);
    std::string piece;
    for (char c : endpoint.credentials.password + "@") {
      if (c != '@') {
        piece += c;
        continue;
      }
      if (piece.size() >= 2) {
        EXPECT_EQ(shown.find(piece), std::string::npos) << url << " shows " << shown;
      }
      piece.clear();
    }
  }
}

// Issue 36 item 7: a raw '|' or blank in a password cut the URL into two pieces, and the config
// showed the first piece's tail of the password; an '@' in a path was read as credentials.
TEST(RemoteUrl, TheConfigShowsNoPieceOfAPasswordCutByASeparator) {
  for (const std::string url : {"redis://u:pa|ss@h", "redis://u:pa ss@h", "http://u:sec ret@h/p", "redis://:ab|cd@h"}) {
    std::string error;
    EXPECT_FALSE(parse_remote_urls(remote_schemes(), url, &error)) << url;
    const std::string shown = redacted_setting("remote", url);
    for (const char* piece : {"pa", "ss", "sec", "ret", "ab", "cd"}) {
      EXPECT_EQ(shown.find(std::string(":") + piece), std::string::npos) << url << " shows " << shown;
      EXPECT_EQ(shown.find(std::string(piece) + "@"), std::string::npos) << url << " shows " << shown;
    }
  }
}

TEST(RemoteUrl, AnAtInAPathIsNeverCredentials) {
  HttpEndpoint with_at = http("http://h/path@x");
  EXPECT_EQ(with_at.address.host, "h");
  EXPECT_EQ(with_at.path, "/path@x");
  EXPECT_TRUE(with_at.credentials.password.empty());
  EXPECT_EQ(redacted_setting("remote", "http://h/path@x"), "http://h/path@x");
  EXPECT_NE(refusal("redis://h/0@x").find("database"), std::string::npos);  // not host x, password "h/0"
  EXPECT_EQ(redis("redis://u:p%2Fw@h/2").credentials.password, "p/w");
}

TEST(RemoteUrl, HttpAndHttpsWithPathPortAndCredentials) {
  HttpEndpoint plain = http("http://cache.example.org/jit/");
  EXPECT_FALSE(plain.tls);
  EXPECT_EQ(plain.address.port, 80);
  EXPECT_EQ(plain.path, "/jit");
  EXPECT_EQ(plain.base_url(), "http://cache.example.org:80/jit");

  HttpEndpoint secure = http("https://ci:p%40ss@[::1]:8443");
  EXPECT_TRUE(secure.tls);
  EXPECT_EQ(secure.address.host, "::1");
  EXPECT_EQ(secure.address.port, 8443);
  EXPECT_EQ(secure.path, "");
  EXPECT_EQ(secure.credentials.user, "ci");
  EXPECT_EQ(secure.credentials.password, "p@ss");
  EXPECT_EQ(secure.base_url(), "https://[::1]:8443");  // credentials go in a header, never the URL
  EXPECT_EQ(secure.redacted(), "https://ci:***@[::1]:8443");
  EXPECT_EQ(http("https://h").address.port, 443);

  EXPECT_NE(refusal("http://host/path?x=1").find("query"), std::string::npos);
  EXPECT_NE(refusal("ftp://host/x").find("unsupported scheme 'ftp'"), std::string::npos);
}

TEST(RemoteUrl, SeveralRemotesAreAskedInTheOrderGiven) {
  std::string error;
  auto list = parse_remote_urls(remote_schemes(), "redis://a:6379|https://b/c  http://d", &error);
  ASSERT_TRUE(list) << error;
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0]->scheme->name, "redis");
  EXPECT_EQ((*list)[1]->redacted(), "https://b:443/c");
  EXPECT_TRUE((*list)[1]->trusts_ca_file());
  EXPECT_EQ((*list)[2]->redacted(), "http://d:80");
  EXPECT_FALSE(parse_remote_urls(remote_schemes(), "redis://a|ftp://b", &error));
  EXPECT_NE(error.find("remote 2"), std::string::npos) << error;
  EXPECT_FALSE(parse_remote_urls(remote_schemes(), " | ", &error));
}

TEST(RemoteUrl, AFileRemoteIsAnAbsoluteDirectoryWrittenOneWay) {
  FileEndpoint shared = file("file:///shared/jit%20cache/");
  EXPECT_EQ(shared.path, "/shared/jit cache");
  EXPECT_EQ(shared.redacted(), "file:///shared/jit cache");
  EXPECT_EQ(file("file:/nfs/cache").path, "/nfs/cache");  // ccache's short form
  EXPECT_NE(refusal("file://server/dir").find("no host"), std::string::npos);
  for (const char* bad : {"file://relative", "file:relative", "file:///a/../b", "file:///a/./b", "file:///a//b", "file:"}) {
    EXPECT_FALSE(refusal(bad).empty()) << bad;
  }
  std::string error;
  auto both = parse_remote_urls(remote_schemes(), "file:///a|https://b/c", &error);
  ASSERT_TRUE(both) << error;
  EXPECT_EQ((*both)[0]->scheme->name, "file");
  EXPECT_EQ((*both)[1]->scheme->name, "https");
}

TEST(RemoteUrl, TheConfigHidesEveryPasswordOfAListAndTheBearerToken) {
  const std::string shown = redacted_setting("remote", "redis://:first-secret@a|https://u:second-secret@b/c");
  EXPECT_EQ(shown, "redis://:***@a|https://u:***@b/c");
  EXPECT_EQ(redacted_setting("remote_bearer_token", "tok-123"), "***");
}

}  // namespace
}  // namespace jitcache

// Tests for store/signed_entry: a file remote's entry is a format 2 entry file; signed, its tag in
// the sidecar verifies over what the reader rebuilds from any sidecar a build records, and a change
// to any part (binary, sidecar, key) or another key's tag is refused.
#include <gtest/gtest.h>

#include "store/local/entry_file.hpp"
#include "store/remote/signed_entry.hpp"

namespace jitcache {
namespace {

const Digest128 kKey{7, 8};

nlohmann::json awkward_sidecar() {
  return {{"kernel_names", {"k\u00e9rnel", "b"}},
          {"compile_ms", 812.0625},
          {"ratio", 0.1},
          {"build_log", std::string("warning: \xff bytes\n")},  // invalid UTF-8, as a driver may log
          {"answers", {{"nested", {1, 2.5, nullptr, true}}}}};
}

TEST(SignedEntry, ASignedEntryIsAFormat2EntryAndVerifiesWithItsKeyOnly) {
  const std::string file = encode_shared_entry(kKey, "binary bytes", awkward_sidecar(), "team-secret");
  std::string why;
  ASSERT_TRUE(store_detail::decode_entry_header(file, file.size(), &why)) << why;  // the local store's format

  RemoteResult loaded = check_shared_entry(kKey, file, "team-secret");
  ASSERT_EQ(loaded.status, RemoteStatus::ok) << loaded.reason;
  EXPECT_EQ(loaded.binary, "binary bytes");
  EXPECT_FALSE(loaded.sidecar.contains(kEntryTagMember));
  EXPECT_EQ(loaded.sidecar["compile_ms"], 812.0625);
  EXPECT_EQ(loaded.sidecar["kernel_names"][0], "k\u00e9rnel");

  EXPECT_EQ(check_shared_entry(kKey, file, "other-secret").status, RemoteStatus::bad_hmac);
  EXPECT_EQ(check_shared_entry(Digest128{7, 9}, file, "team-secret").status, RemoteStatus::corrupt);  // key inside
  // Unsigned, read by a node with a key: refused; a signed entry read without a key: served, tag dropped.
  EXPECT_EQ(check_shared_entry(kKey, encode_shared_entry(kKey, "b", awkward_sidecar(), ""), "team-secret").status,
            RemoteStatus::bad_hmac);
  RemoteResult keyless = check_shared_entry(kKey, file, "");
  ASSERT_EQ(keyless.status, RemoteStatus::ok);
  EXPECT_FALSE(keyless.sidecar.contains(kEntryTagMember));
}

// Someone without the key edits the sidecar (a kernel's recorded answers) and fixes every
// checksum: the tag no longer verifies.
TEST(SignedEntry, AnEditedSidecarWithValidChecksumsIsRefused) {
  const std::string file = encode_shared_entry(kKey, "binary", awkward_sidecar(), "team-secret");
  std::string why;
  store_detail::EntryHeader header;
  std::string binary = file;
  std::optional<std::string> sidecar_text = store_detail::split_entry(&binary, kKey, &header, &why);
  ASSERT_TRUE(sidecar_text) << why;
  nlohmann::json edited = nlohmann::json::parse(*sidecar_text);
  edited["kernel_names"][1] = "evil";
  const std::string forged = store_detail::encode_entry(kKey, edited.dump(), binary);
  RemoteResult refused = check_shared_entry(kKey, forged, "team-secret");
  EXPECT_EQ(refused.status, RemoteStatus::bad_hmac) << refused.reason;
  EXPECT_TRUE(refused.binary.empty());
}

}  // namespace
}  // namespace jitcache

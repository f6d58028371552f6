// Tests for core/MemoryTier: per-scope entries, LRU order, byte budget, entry cap, and that a
// dropped entry releases its object (the adapter's deleter runs) only when nobody holds it.
#include <gtest/gtest.h>

#include "core/memory_tier.hpp"

namespace jitcache {
namespace {

Digest128 key(std::uint64_t n) { return Digest128{n, n * 31 + 7}; }

// A value whose object counts its releases, as a retained cl_program would.
MemoryValue value(std::uint64_t bytes, int* released) {
  MemoryValue v;
  v.object = std::shared_ptr<void>(new int(0), [released](void* p) {
    delete static_cast<int*>(p);
    ++*released;
  });
  v.bytes = bytes;
  return v;
}

TEST(MemoryTier, FindsOnlyInTheSameScope) {
  int released = 0;
  MemoryTier tier(1 << 20, 16);
  tier.insert(1, key(1), value(100, &released));
  EXPECT_TRUE(tier.find(1, key(1)));
  EXPECT_FALSE(tier.find(2, key(1)));
  EXPECT_FALSE(tier.find(1, key(2)));
}

TEST(MemoryTier, EvictsLeastRecentlyUsedOverTheByteBudget) {
  int released = 0;
  MemoryTier tier(300, 16);
  tier.insert(1, key(1), value(100, &released));
  tier.insert(1, key(2), value(100, &released));
  tier.insert(1, key(3), value(100, &released));
  EXPECT_TRUE(tier.find(1, key(1)));  // now key 2 is the least recently used
  tier.insert(1, key(4), value(100, &released));
  EXPECT_FALSE(tier.find(1, key(2)));
  EXPECT_TRUE(tier.find(1, key(1)));
  EXPECT_TRUE(tier.find(1, key(3)));
  EXPECT_TRUE(tier.find(1, key(4)));
  EXPECT_EQ(tier.bytes(), 300u);
  EXPECT_EQ(released, 1);
}

TEST(MemoryTier, EntryCapHoldsWhateverTheBytes) {
  int released = 0;
  MemoryTier tier(1 << 20, 2);
  for (std::uint64_t n = 0; n < 5; ++n) tier.insert(7, key(n), value(1, &released));
  EXPECT_EQ(tier.entries(), 2u);
  EXPECT_EQ(released, 3);
  EXPECT_TRUE(tier.find(7, key(4)));
}

TEST(MemoryTier, ValueLargerThanTheBudgetIsNotKept) {
  int released = 0;
  MemoryTier tier(100, 16);
  tier.insert(1, key(1), value(50, &released));
  tier.insert(1, key(2), value(101, &released));
  EXPECT_FALSE(tier.find(1, key(2)));
  EXPECT_TRUE(tier.find(1, key(1)));
  EXPECT_EQ(released, 1);
}

TEST(MemoryTier, ZeroBudgetKeepsNothing) {
  int released = 0;
  MemoryTier tier(0, 0);
  tier.insert(1, key(1), value(0, &released));
  EXPECT_FALSE(tier.find(1, key(1)));
  EXPECT_EQ(released, 1);
}

TEST(MemoryTier, ReplacingAndErasingKeepTheAccountingAndReleaseOnce) {
  int released = 0;
  MemoryTier tier(1000, 16);
  tier.insert(1, key(1), value(100, &released));
  tier.insert(1, key(1), value(200, &released));
  EXPECT_EQ(tier.bytes(), 200u);
  EXPECT_EQ(released, 1);
  tier.insert(2, key(1), value(300, &released));
  tier.insert(2, key(2), value(300, &released));
  tier.erase_scope(2);
  EXPECT_EQ(tier.bytes(), 200u);
  EXPECT_EQ(released, 3);
  tier.erase(1, key(1));
  EXPECT_EQ(tier.bytes(), 0u);
  EXPECT_EQ(tier.entries(), 0u);
  EXPECT_EQ(released, 4);
}

TEST(MemoryTier, AnObjectInUseOutlivesItsEviction) {
  int released = 0;
  MemoryTier tier(100, 16);
  tier.insert(1, key(1), value(100, &released));
  std::optional<MemoryValue> held = tier.find(1, key(1));
  tier.insert(1, key(2), value(100, &released));  // evicts key 1 while `held` still uses it
  EXPECT_EQ(released, 0);
  held.reset();
  EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace jitcache

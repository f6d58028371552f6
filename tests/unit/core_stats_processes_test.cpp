// Counters merged by many real processes at once lose no increment: 8 forked processes each
// count and flush many times against one stats file (and one entry-hits file).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/entry_hits.hpp"
#include "core/stats.hpp"

namespace jitcache {
namespace {

constexpr int kProcesses = 8;
constexpr int kFlushesPerProcess = 150;

TEST(StatsAcrossProcesses, EightProcessesLoseNoIncrement) {
  char pattern[] = "/tmp/jitcache-stats-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path root = pattern;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      for (int i = 0; i < kFlushesPerProcess; ++i) {
        count(counter::hit_disk);
        count(counter::time_saved_us, 10);
        count_entry_hit("0123456789abcdef0123456789abcdef");
        ok = flush_stats(root) && ok;
        ok = flush_entry_hits(root) && ok;
      }
      std::_Exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const CounterMap totals = read_stats(root);
  EXPECT_EQ(totals.at(counter::hit_disk), kProcesses * kFlushesPerProcess);
  EXPECT_EQ(totals.at(counter::time_saved_us), kProcesses * kFlushesPerProcess * 10);
  EXPECT_EQ(read_entry_hits(root).at("0123456789abcdef0123456789abcdef"), kProcesses * kFlushesPerProcess);
  EXPECT_TRUE(zero_stats(root));
  EXPECT_TRUE(read_stats(root).empty());
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace jitcache

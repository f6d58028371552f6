// enter_recorded_context (capture/replay.hpp): a recorded inputs file is data. Replaying it
// sets the keyed variables it holds and unsets keyed ones it does not, and never sets anything
// else (LD_PRELOAD, jitcache's own settings), whatever the record says.
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "capture/replay.hpp"

namespace jitcache::opencl {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "<unset>";
}

TEST(ReplayContext, SetsOnlyKeyedVariablesAndEntersTheRecordedDirectory) {
  ::setenv("POCL_VECTORIZER_REMARKS", "stale", 1);  // keyed (POCL_VECTORIZER_*), not in the record
  ::unsetenv("LD_PRELOAD");
  ::unsetenv("JITCACHE_DISABLE");
  RecordedInputs inputs;
  inputs.environment = {{"POCL_WORK_GROUP_METHOD", "cbs"},
                        {"LD_PRELOAD", "/tmp/evil.so"},
                        {"JITCACHE_DISABLE", "1"},
                        {"UNRELATED", "x"}};
  const std::filesystem::path before = std::filesystem::current_path();
  inputs.working_dir = std::filesystem::temp_directory_path().string();
  std::string why;
  ASSERT_TRUE(enter_recorded_context(inputs, &why)) << why;
  EXPECT_EQ(env("POCL_WORK_GROUP_METHOD"), "cbs");
  EXPECT_EQ(env("POCL_VECTORIZER_REMARKS"), "<unset>");
  EXPECT_EQ(env("LD_PRELOAD"), "<unset>");
  EXPECT_EQ(env("JITCACHE_DISABLE"), "<unset>");
  EXPECT_EQ(env("UNRELATED"), "<unset>");
  EXPECT_EQ(std::filesystem::current_path(), std::filesystem::canonical(inputs.working_dir));
  std::filesystem::current_path(before);

  inputs.working_dir = "/nonexistent/recorded/dir";
  EXPECT_FALSE(enter_recorded_context(inputs, &why));
  EXPECT_NE(why.find("/nonexistent/recorded/dir"), std::string::npos);
}

}  // namespace
}  // namespace jitcache::opencl

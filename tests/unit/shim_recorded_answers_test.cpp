// The recorded answers (issue 20) as written and as read back: a record round-trips, and a
// hostile one (wrong types, sizes, hex, versions) is refused with a reason, never half-used.
#include <gtest/gtest.h>

#include <functional>

#include "hashing/digest.hpp"
#include "shim/level_zero/recorded_build_log.hpp"
#include "shim/opencl/recorded_answers.hpp"

namespace jitcache {
namespace {

using opencl::RecordedAnswer;
using opencl::RecordedKernel;

std::map<std::string, RecordedKernel> sample_kernels() {
  RecordedKernel kernel;
  kernel.attributes = {CL_SUCCESS, std::string("__attribute__((reqd_work_group_size(4, 2, 1)))") + '\0'};
  std::array<RecordedAnswer, opencl::kArgQueries.size()> arg;
  arg[0] = {CL_SUCCESS, std::string("\x9b\x11\x00\x00", 4)};
  arg[1] = {CL_SUCCESS, std::string("\xa3\x11\x00\x00", 4)};
  arg[2] = {CL_SUCCESS, std::string("int*") + '\0'};
  arg[3] = {CL_SUCCESS, std::string(8, '\0')};
  arg[4] = {CL_KERNEL_ARG_INFO_NOT_AVAILABLE, ""};
  kernel.args.push_back(arg);
  return {{"scale", kernel}};
}

nlohmann::json sample_sidecar() {
  std::string problem;
  nlohmann::json answers = opencl::answers_json("warning: x\n", sample_kernels(), &problem);
  EXPECT_EQ(problem, "");
  return {{"answers", answers}};
}

TEST(RecordedAnswers, OpenClRecordRoundTrips) {
  std::string problem;
  auto parsed = opencl::parse_answers(sample_sidecar(), &problem);
  ASSERT_NE(parsed, nullptr) << problem;
  EXPECT_EQ(parsed->build_log, "warning: x\n");
  ASSERT_EQ(parsed->kernels.count("scale"), 1u);
  const RecordedKernel& kernel = parsed->kernels.at("scale");
  const std::map<std::string, RecordedKernel> kernels = sample_kernels();
  const RecordedKernel& expected = kernels.at("scale");
  EXPECT_EQ(kernel.attributes.bytes, expected.attributes.bytes);
  ASSERT_EQ(kernel.args.size(), 1u);
  for (std::size_t q = 0; q < opencl::kArgQueries.size(); ++q) {
    EXPECT_EQ(kernel.args[0][q].status, expected.args[0][q].status);
    EXPECT_EQ(kernel.args[0][q].bytes, expected.args[0][q].bytes);
  }
}

// `jitcache pack --obfuscate` files kernel answers under hashed names; the shim hashes the name
// it is asked about. Exactly one of the two forms may be present.
TEST(RecordedAnswers, ObfuscatedRecordIsFiledUnderHashedKernelNames) {
  nlohmann::json sidecar = sample_sidecar();
  nlohmann::json hashed = {{obfuscated_name("scale"), sidecar["answers"]["kernels"]["scale"]}};
  sidecar["answers"]["hashed_kernels"] = hashed;
  std::string problem;
  EXPECT_EQ(opencl::parse_answers(sidecar, &problem), nullptr) << "both forms at once";
  sidecar["answers"].erase("kernels");
  auto parsed = opencl::parse_answers(sidecar, &problem);
  ASSERT_NE(parsed, nullptr) << problem;
  EXPECT_TRUE(parsed->kernel_names_hashed);
  EXPECT_EQ(parsed->kernels.count(obfuscated_name("scale")), 1u);
  EXPECT_FALSE(opencl::parse_answers(sample_sidecar(), &problem)->kernel_names_hashed);
}

TEST(RecordedAnswers, GivesAnswersAsADriverWould) {
  RecordedAnswer answer{CL_SUCCESS, std::string("abc") + '\0'};
  size_t size = 0;
  EXPECT_EQ(opencl::give_answer(answer, 0, nullptr, &size), CL_SUCCESS);
  EXPECT_EQ(size, 4u);
  char small[2];
  EXPECT_EQ(opencl::give_answer(answer, sizeof small, small, nullptr), CL_INVALID_VALUE);
  char buffer[8] = {};
  EXPECT_EQ(opencl::give_answer(answer, sizeof buffer, buffer, &size), CL_SUCCESS);
  EXPECT_STREQ(buffer, "abc");
  EXPECT_EQ(opencl::give_answer({CL_KERNEL_ARG_INFO_NOT_AVAILABLE, ""}, 8, buffer, &size),
            CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
}

TEST(RecordedAnswers, HostileOpenClRecordsAreRefusedWithAReason) {
  const std::vector<std::pair<const char*, std::function<void(nlohmann::json&)>>> edits = {
      {"missing", [](nlohmann::json& s) { s.erase("answers"); }},
      {"not an object", [](nlohmann::json& s) { s["answers"] = nlohmann::json::array(); }},
      {"no version", [](nlohmann::json& s) { s["answers"].erase("version"); }},
      {"another version", [](nlohmann::json& s) { s["answers"]["version"] = 2; }},
      {"log not a string", [](nlohmann::json& s) { s["answers"]["build_log"] = nullptr; }},
      {"log too long", [](nlohmann::json& s) { s["answers"]["build_log"] = std::string((1u << 20) + 1, 'w'); }},
      {"kernels an array", [](nlohmann::json& s) { s["answers"]["kernels"] = nlohmann::json::array(); }},
      {"kernel not an object", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"] = 3; }},
      {"no attributes", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"].erase("attributes"); }},
      {"args not an array", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["args"] = "x"; }},
      {"an argument of 4", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["args"][0].erase(0); }},
      {"status a string", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["attributes"]["status"] = "0"; }},
      {"status too large", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["attributes"]["status"] = 1ll << 33; }},
      {"odd hex", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["attributes"]["bytes"] = "abc"; }},
      {"not hex", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["attributes"]["bytes"] = "0g"; }},
      {"upper-case hex", [](nlohmann::json& s) { s["answers"]["kernels"]["scale"]["attributes"]["bytes"] = "0A"; }},
      {"bytes with an error", [](nlohmann::json& s) {
         s["answers"]["kernels"]["scale"]["attributes"] = {{"status", -19}, {"bytes", "00"}};
       }},
      {"answer over 64 KiB", [](nlohmann::json& s) {
         s["answers"]["kernels"]["scale"]["attributes"]["bytes"] = std::string((64u << 10) * 2 + 2, '0');
       }},
      {"too many arguments", [](nlohmann::json& s) {
         auto& args = s["answers"]["kernels"]["scale"]["args"];
         while (args.size() <= 1024) args.push_back(args[0]);
       }},
      {"over 4 MiB in all", [](nlohmann::json& s) {
         nlohmann::json big = {{"status", 0}, {"bytes", std::string(60000 * 2, '0')}};
         for (int k = 0; k < 80; ++k) s["answers"]["kernels"]["k" + std::to_string(k)] = {{"attributes", big}, {"args", nlohmann::json::array()}};
       }},
  };
  for (const auto& [name, edit] : edits) {
    SCOPED_TRACE(name);
    nlohmann::json sidecar = sample_sidecar();
    edit(sidecar);
    std::string problem;
    EXPECT_EQ(opencl::parse_answers(sidecar, &problem), nullptr);
    EXPECT_NE(problem.find("recorded answers"), std::string::npos) << problem;
  }
}

TEST(RecordedAnswers, OversizedOpenClRecordsAreNotWritten) {
  std::string problem;
  EXPECT_TRUE(opencl::answers_json(std::string((1u << 20) + 1, 'w'), {}, &problem).is_null());
  EXPECT_NE(problem.find("build log longer"), std::string::npos) << problem;
}

TEST(RecordedAnswers, LevelZeroLogRoundTripsAndHostileRecordsAreRefused) {
  std::string problem;
  nlohmann::json sidecar = {{"answers", level_zero::answers_json("compiled 12 bytes", &problem)}};
  auto log = level_zero::recorded_log(sidecar, &problem);
  ASSERT_NE(log, nullptr) << problem;
  EXPECT_EQ(*log, "compiled 12 bytes");
  for (nlohmann::json bad : {nlohmann::json::object(), nlohmann::json{{"answers", 1}},
                             nlohmann::json{{"answers", {{"version", 9}, {"build_log", ""}}}},
                             nlohmann::json{{"answers", {{"version", 1}, {"build_log", 7}}}},
                             nlohmann::json{{"answers", {{"version", 1}, {"build_log", std::string((1u << 20) + 1, 'w')}}}}}) {
    EXPECT_EQ(level_zero::recorded_log(bad, &problem), nullptr) << bad.dump().substr(0, 80);
  }
  EXPECT_TRUE(level_zero::answers_json(std::string((1u << 20) + 1, 'w'), &problem).is_null());
}

}  // namespace
}  // namespace jitcache

// The recorded answers (issue 20) as written and as read back: a record round-trips, and a
// hostile one (wrong types, sizes, hex, versions) is refused with a reason, never half-used.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <tuple>

#include "hashing/digest.hpp"
#include "shim/level_zero/recorded_build_log.hpp"
#include "shim/opencl/lazy_answers.hpp"
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

// What a hit passes the adapter: the sidecar's "answers" as JSON text (null: none).
std::shared_ptr<const opencl::RecordedAnswers> parse(const nlohmann::json& sidecar, std::string* problem) {
  if (!sidecar.contains("answers")) return opencl::parse_answers(nullptr, problem);
  const std::string text = sidecar["answers"].dump();
  return opencl::parse_answers(&text, problem);
}

std::shared_ptr<const std::string> level_zero_log(const nlohmann::json& sidecar, std::string* problem) {
  if (!sidecar.contains("answers")) return level_zero::recorded_log(nullptr, problem);
  const std::string text = sidecar["answers"].dump();
  return level_zero::recorded_log(&text, problem);
}

TEST(RecordedAnswers, OpenClRecordRoundTrips) {
  std::string problem;
  auto parsed = parse(sample_sidecar(), &problem);
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
  EXPECT_EQ(parse(sidecar, &problem), nullptr) << "both forms at once";
  sidecar["answers"].erase("kernels");
  auto parsed = parse(sidecar, &problem);
  ASSERT_NE(parsed, nullptr) << problem;
  EXPECT_TRUE(parsed->kernel_names_hashed);
  EXPECT_EQ(parsed->kernels.count(obfuscated_name("scale")), 1u);
  EXPECT_FALSE(parse(sample_sidecar(), &problem)->kernel_names_hashed);
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
    EXPECT_EQ(parse(sidecar, &problem), nullptr);
    EXPECT_NE(problem.find("recorded answers"), std::string::npos) << problem;
  }
}

// The decoder reads the text itself (RapidJSON, no nlohmann tree): text no tree could hold is
// refused too, each with its reason, and a deep nesting does not recurse.
TEST(RecordedAnswers, HostileAnswersTextIsRefusedWithAReason) {
  const std::string kernel = R"({"attributes":{"status":0,"bytes":"00"},"args":[]})";
  auto record = [](const std::string& kernels) {
    return R"({"version":1,"build_log":"","kernels":{)" + kernels + "}}";
  };
  const std::vector<std::tuple<const char*, std::string, const char*>> cases = {
      {"empty", "", "are not valid JSON"},
      {"cut short", R"({"version":1,)", "are not valid JSON"},
      {"trailing text", record("") + " x", "are not valid JSON"},
      {"invalid UTF-8", "{\"version\":1,\"build_log\":\"\xff\",\"kernels\":{}}", "are not valid JSON"},
      {"a number too large", record(R"("k":{"attributes":{"status":1e999,"bytes":""},"args":[]})"),
       "are not valid JSON"},
      {"nested a million deep", std::string(1000000, '[') + std::string(1000000, ']'), "are not an object"},
      {"a lone surrogate in the log", R"({"version":1,"build_log":"\udc00","kernels":{}})", "have no valid build_log"},
      {"a lone surrogate in a name", record(R"("\udc00":)" + kernel), "name a kernel that is not UTF-8"},
      {"version twice", R"({"version":1,"version":1,"build_log":"","kernels":{}})", "name a field twice"},
      {"version a fraction", R"({"version":1.0,"build_log":"","kernels":{}})", "are of another version"},
      {"a kernel twice", record(R"("k":)" + kernel + R"(,"k":)" + kernel), "name kernel k twice"},
      {"status twice", record(R"("k":{"attributes":{"status":0,"status":0,"bytes":""},"args":[]})"),
       "for kernel k are malformed"},
      {"status a fraction", record(R"("k":{"attributes":{"status":0.5,"bytes":""},"args":[]})"),
       "for kernel k are malformed"},
      {"text over 16 MiB", R"({"version":1,"build_log":")" + std::string(16u << 20, 'w') + R"(","kernels":{}})",
       "exceed the size caps"},
  };
  for (const auto& [name, text, reason] : cases) {
    SCOPED_TRACE(name);
    std::string problem;
    EXPECT_EQ(opencl::parse_answers(&text, &problem), nullptr);
    EXPECT_NE(problem.find(std::string("recorded answers ") + reason), std::string::npos) << problem;
  }
  std::string problem;
  const std::string minimal = record(R"("k":)" + kernel);
  EXPECT_NE(opencl::parse_answers(&minimal, &problem), nullptr) << problem;
}

// The real PoCL sidecar of bench/data (three kernels of three arguments): the decoder reads its
// answers as an nlohmann tree of them reads, compact (as in a pack) or indented (a disk sidecar).
TEST(RecordedAnswers, TheRealPoclSidecarDecodesAsItsNlohmannTreeReads) {
  std::ifstream file(std::string(JITCACHE_SOURCE_DIR) + "/bench/data/pocl_example_sidecar.json");
  std::stringstream text;
  text << file.rdbuf();
  const nlohmann::json answers = nlohmann::json::parse(text.str()).at("answers");
  auto unhex = [](const std::string& hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
  };
  auto expect_answer = [&](const RecordedAnswer& got, const nlohmann::json& want) {
    EXPECT_EQ(got.status, want.at("status").get<cl_int>());
    EXPECT_EQ(got.bytes, unhex(want.at("bytes").get<std::string>()));
  };
  ASSERT_EQ(answers.at("kernels").size(), 3u);
  for (const std::string& form : {answers.dump(), answers.dump(2)}) {
    std::string problem;
    auto decoded = opencl::parse_answers(&form, &problem);
    ASSERT_NE(decoded, nullptr) << problem;
    EXPECT_EQ(decoded->build_log, answers.at("build_log").get<std::string>());
    EXPECT_FALSE(decoded->kernel_names_hashed);
    ASSERT_EQ(decoded->kernels.size(), answers.at("kernels").size());
    for (const auto& [name, kernel] : answers.at("kernels").items()) {
      SCOPED_TRACE(name);
      ASSERT_EQ(decoded->kernels.count(name), 1u);
      const RecordedKernel& got = decoded->kernels.at(name);
      expect_answer(got.attributes, kernel.at("attributes"));
      ASSERT_EQ(got.args.size(), kernel.at("args").size());
      for (std::size_t a = 0; a < got.args.size(); ++a) {
        for (std::size_t q = 0; q < opencl::kArgQueries.size(); ++q) expect_answer(got.args[a][q], kernel.at("args")[a][q]);
      }
    }
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
  auto log = level_zero_log(sidecar, &problem);
  ASSERT_NE(log, nullptr) << problem;
  EXPECT_EQ(*log, "compiled 12 bytes");
  for (nlohmann::json bad : {nlohmann::json::object(), nlohmann::json{{"answers", 1}},
                             nlohmann::json{{"answers", {{"version", 9}, {"build_log", ""}}}},
                             nlohmann::json{{"answers", {{"version", 1}, {"build_log", 7}}}},
                             nlohmann::json{{"answers", {{"version", 1}, {"build_log", std::string((1u << 20) + 1, 'w')}}}}}) {
    EXPECT_EQ(level_zero_log(bad, &problem), nullptr) << bad.dump().substr(0, 80);
  }
  EXPECT_TRUE(level_zero::answers_json(std::string((1u << 20) + 1, 'w'), &problem).is_null());
}

// A hit's record is decoded at the first query only, once however many threads ask; a malformed
// one is refused once (one warning, the entry dropped) and every query gets null (the driver).
TEST(LazyAnswers, DecodesOnceAndRefusesAMalformedRecordOnce) {
  int refusals = 0;
  std::string refused_for;
  auto count = [&](const std::string& problem) {
    ++refusals;
    refused_for = problem;
  };
  auto good = std::make_shared<const std::string>(sample_sidecar()["answers"].dump());
  opencl::LazyAnswers lazy_good(good, count);
  std::shared_ptr<const opencl::RecordedAnswers> first = lazy_good.get();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->build_log, "warning: x\n");
  EXPECT_EQ(lazy_good.get(), first);  // the same record: decoded once
  EXPECT_EQ(refusals, 0);

  nlohmann::json bad = sample_sidecar();
  bad["answers"]["kernels"]["scale"]["attributes"]["bytes"] = "zz";
  opencl::LazyAnswers lazy_bad(std::make_shared<const std::string>(bad["answers"].dump()), count);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { EXPECT_EQ(lazy_bad.get(), nullptr); });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(lazy_bad.get(), nullptr);
  EXPECT_EQ(refusals, 1);
  EXPECT_NE(refused_for.find("recorded answers for kernel scale"), std::string::npos) << refused_for;
}

}  // namespace
}  // namespace jitcache

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "hashing/key.hpp"

namespace jitcache {
namespace {

ProgramInputs sample_program() {
  ProgramInputs program;
  program.api = Api::opencl;
  program.kind = ProgramKind::source;
  program.input = "#include \"a.h\"\n__kernel void k(__global int* x) { x[0] = A; }\n";
  program.options = "-cl-fast-relaxed-math -DN=4";
  program.headers = {{"a.h", "/src/a.h", true, xxh3_128("#define A 1\n")}};
  program.spec_constants = {{1, std::string("\x01\x00\x00\x00", 4)}, {7, std::string("\x02", 1)}};
  program.environment = {{"IGC_Flag", "1"}};
  return program;
}

TargetIdentity sample_target() {
  TargetIdentity target;
  target.compiler.libraries = {
      {"/usr/lib/libigdrcl.so", "0123abcd", 1000, 111},
      {"/usr/lib/libcustom-nobuildid.so", "", 2000, 222},
  };
  target.compiler.versions = {{"platform_version", "OpenCL 3.0"}, {"driver_version", "24.1"}};
  target.device.fields = {{"vendor_id", "0x8086"}, {"name", "Arc A770"}};
  return target;
}

const KeyComponent& component(const KeyRecord& record, const std::string& name) {
  for (const KeyComponent& c : record.components) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no component " + name);
}

Digest128 key_of(const ProgramInputs& program, const TargetIdentity& target) {
  return derive_key(program, target).key;
}

TEST(NormalizeOptions, CollapsesWhitespaceRunsAndTrims) {
  EXPECT_EQ(normalize_options("  -cl-std=CL2.0 \t\n -DX=1   -I dir\r\n"), "-cl-std=CL2.0 -DX=1 -I dir");
  EXPECT_EQ(normalize_options(""), "");
  EXPECT_EQ(normalize_options(" \t "), "");
  EXPECT_EQ(normalize_options("-b -a"), "-b -a");  // order kept
}

TEST(DeriveKey, IsDeterministic) {
  EXPECT_EQ(key_of(sample_program(), sample_target()), key_of(sample_program(), sample_target()));
}

TEST(DeriveKey, HasEveryComponentInFixedOrder) {
  const KeyRecord record = derive_key(sample_program(), sample_target());
  std::vector<std::string> names;
  for (const KeyComponent& c : record.components) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"schema", "api", "kind", "input", "options", "headers",
                                             "spec_constants", "compiler", "device", "environment"}));
}

struct Mutation {
  const char* component;
  std::function<void(ProgramInputs&, TargetIdentity&)> apply;
};

// Every input that can change codegen must change the key, and exactly its own component.
TEST(DeriveKey, EachComponentChangesTheKey) {
  const std::vector<Mutation> mutations = {
      {"api", [](ProgramInputs& p, TargetIdentity&) { p.api = Api::level_zero; }},
      {"kind", [](ProgramInputs& p, TargetIdentity&) { p.kind = ProgramKind::compiled; }},
      {"input", [](ProgramInputs& p, TargetIdentity&) { p.input += " "; }},
      {"options", [](ProgramInputs& p, TargetIdentity&) { p.options = "-DN=4 -cl-fast-relaxed-math"; }},
      {"options", [](ProgramInputs& p, TargetIdentity&) { p.options = "-cl-fast-relaxed-math -DN=5"; }},
      {"headers", [](ProgramInputs& p, TargetIdentity&) { p.headers[0].digest = xxh3_128("#define A 2\n"); }},
      {"headers", [](ProgramInputs& p, TargetIdentity&) { p.headers[0].path = "/other/a.h"; }},
      {"headers", [](ProgramInputs& p, TargetIdentity&) { p.headers.push_back({"b.h", "", false, {}}); }},
      {"headers", [](ProgramInputs& p, TargetIdentity&) { p.headers.clear(); }},
      {"spec_constants", [](ProgramInputs& p, TargetIdentity&) { p.spec_constants[0].value[0] = 9; }},
      {"spec_constants", [](ProgramInputs& p, TargetIdentity&) { p.spec_constants[1].id = 8; }},
      {"spec_constants", [](ProgramInputs& p, TargetIdentity&) { p.spec_constants.pop_back(); }},
      {"compiler", [](ProgramInputs&, TargetIdentity& t) { t.compiler.libraries[0].build_id = "0123abce"; }},
      {"compiler", [](ProgramInputs&, TargetIdentity& t) { t.compiler.libraries[0].path = "/opt/libigdrcl.so"; }},
      {"compiler", [](ProgramInputs&, TargetIdentity& t) { t.compiler.libraries[1].size += 1; }},
      {"compiler", [](ProgramInputs&, TargetIdentity& t) { t.compiler.libraries[1].mtime_ns += 1; }},
      {"compiler", [](ProgramInputs&, TargetIdentity& t) { t.compiler.versions[1].second = "24.2"; }},
      {"device", [](ProgramInputs&, TargetIdentity& t) { t.device.fields[1].second = "Arc A750"; }},
      {"device", [](ProgramInputs&, TargetIdentity& t) { t.device.fields.push_back({"device_version", "x"}); }},
      {"environment", [](ProgramInputs& p, TargetIdentity&) { p.environment[0].second = "2"; }},
      {"environment", [](ProgramInputs& p, TargetIdentity&) { p.environment.clear(); }},
  };
  const KeyRecord base = derive_key(sample_program(), sample_target());
  for (const Mutation& mutation : mutations) {
    ProgramInputs program = sample_program();
    TargetIdentity target = sample_target();
    mutation.apply(program, target);
    const KeyRecord changed = derive_key(program, target);
    EXPECT_NE(changed.key, base.key) << mutation.component;
    for (const KeyComponent& c : changed.components) {
      const bool should_change = c.name == mutation.component;
      EXPECT_EQ(c.digest != component(base, c.name).digest, should_change)
          << "mutating " << mutation.component << ", component " << c.name;
    }
  }
}

TEST(DeriveKey, WhitespaceRunsInOptionsDoNotChangeTheKey) {
  ProgramInputs spaced = sample_program();
  spaced.options = "  -cl-fast-relaxed-math \t\n  -DN=4  ";
  EXPECT_EQ(key_of(spaced, sample_target()), key_of(sample_program(), sample_target()));
}

TEST(DeriveKey, SpecConstantOrderDoesNotChangeTheKey) {
  ProgramInputs reversed = sample_program();
  std::swap(reversed.spec_constants[0], reversed.spec_constants[1]);
  EXPECT_EQ(key_of(reversed, sample_target()), key_of(sample_program(), sample_target()));
}

TEST(DeriveKey, LibraryWithBuildIdIgnoresSizeAndMtime) {
  TargetIdentity touched = sample_target();
  touched.compiler.libraries[0].size = 999999;
  touched.compiler.libraries[0].mtime_ns = 42;
  EXPECT_EQ(key_of(sample_program(), touched), key_of(sample_program(), sample_target()));
}

TEST(DeriveKey, LibraryWithoutBuildIdUsesSizeAndMtime) {
  TargetIdentity touched = sample_target();
  touched.compiler.libraries[1].mtime_ns += 1'000'000'000;
  EXPECT_NE(key_of(sample_program(), touched), key_of(sample_program(), sample_target()));
  TargetIdentity resized = sample_target();
  resized.compiler.libraries[1].size = 2001;
  EXPECT_NE(key_of(sample_program(), resized), key_of(sample_program(), sample_target()));
}

// The compiler component's value is built once per identity (a memo); what it records must
// still be each identity's own, also where the key is the same (a build-id hides size and mtime).
TEST(DeriveKey, CompilerValueIsEachIdentitysOwnEvenWhenTheKeyIsTheSame) {
  const TargetIdentity original = sample_target();
  TargetIdentity touched = sample_target();
  touched.compiler.libraries[0].mtime_ns = 42;
  touched.compiler.libraries[0].size = 999999;
  // The value lists libraries by path: [1] is /usr/lib/libigdrcl.so, libraries[0] of the identity.
  for (int round = 0; round < 2; ++round) {  // the second round is served from the memo
    const KeyComponent before = component(derive_key(sample_program(), original), "compiler");
    const KeyComponent after = component(derive_key(sample_program(), touched), "compiler");
    EXPECT_EQ(before.digest, after.digest);
    EXPECT_EQ(before.value["libraries"][1]["mtime_ns"], 111);
    EXPECT_EQ(after.value["libraries"][1]["mtime_ns"], 42);
    EXPECT_EQ(after.value["libraries"][1]["size"], 999999);
    TargetIdentity rebuilt = sample_target();
    rebuilt.compiler.libraries[0].build_id = "4567ef01";
    const KeyComponent changed = component(derive_key(sample_program(), rebuilt), "compiler");
    EXPECT_NE(changed.digest, before.digest);
    EXPECT_EQ(changed.value["libraries"][1]["build_id"], "4567ef01");
  }
}

TEST(DeriveKey, InputBytesAreHashedExactly) {
  ProgramInputs with_nul = sample_program();
  with_nul.kind = ProgramKind::il;
  with_nul.input = std::string("\x03\x02\x23\x07\0\0", 6);
  ProgramInputs truncated = with_nul;
  truncated.input.pop_back();
  EXPECT_NE(key_of(with_nul, sample_target()), key_of(truncated, sample_target()));
}

TEST(KeyRecordJson, HasDocumentedShape) {
  const KeyRecord record = derive_key(sample_program(), sample_target());
  const nlohmann::json json = record.to_json();
  EXPECT_EQ(json["schema"], kKeySchemaVersion);
  EXPECT_EQ(json["key"], record.key.hex());
  const auto& components = json["components"];
  ASSERT_EQ(components.size(), record.components.size());
  for (const KeyComponent& c : record.components) {
    EXPECT_EQ(components[c.name]["digest"], c.digest.hex()) << c.name;
  }
  EXPECT_EQ(components["api"]["value"], "opencl");
  EXPECT_EQ(components["kind"]["value"], "source");
  EXPECT_EQ(components["options"]["value"], "-cl-fast-relaxed-math -DN=4");
  const auto& input = components["input"]["value"];
  EXPECT_EQ(input["size"], sample_program().input.size());
  EXPECT_EQ(input["digest"], xxh3_128(sample_program().input).hex());
  EXPECT_EQ(input["text"], sample_program().input);
  EXPECT_EQ(components["headers"]["value"][0]["path"], "/src/a.h");
  EXPECT_EQ(components["headers"]["value"][0]["found"], true);
  EXPECT_EQ(components["spec_constants"]["value"][0]["value_hex"], "01000000");
  EXPECT_EQ(components["spec_constants"]["value"][1]["id"], 7);
  EXPECT_EQ(components["compiler"]["value"]["versions"]["driver_version"], "24.1");
  EXPECT_EQ(components["compiler"]["value"]["libraries"].size(), 2u);
  EXPECT_EQ(components["device"]["value"]["vendor_id"], "0x8086");
  EXPECT_EQ(components["environment"]["value"]["IGC_Flag"], "1");
}

TEST(KeyRecordJson, TextOnlyForSmallSources) {
  ProgramInputs large = sample_program();
  large.input.assign(4096, 'x');
  EXPECT_FALSE(derive_key(large, sample_target()).to_json()["components"]["input"]["value"].contains("text"));
  ProgramInputs il = sample_program();
  il.kind = ProgramKind::il;
  EXPECT_FALSE(derive_key(il, sample_target()).to_json()["components"]["input"]["value"].contains("text"));
}

TEST(KeyRecordJson, InvalidUtf8StillSerializes) {
  ProgramInputs program = sample_program();
  program.input = "kernel \xff\xfe void";
  program.environment = {{"VAR", "\xc3"}};
  TargetIdentity target = sample_target();
  target.device.fields.push_back({"name\x80", "\xed\xa0\x80"});
  const KeyRecord record = derive_key(program, target);
  std::string dumped;
  EXPECT_NO_THROW(dumped = record.to_json().dump());
  EXPECT_NE(dumped.find(record.key.hex()), std::string::npos);
}

}  // namespace
}  // namespace jitcache

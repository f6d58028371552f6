#include "hashing/recorded_inputs.hpp"

#include <cstring>
#include <fstream>
#include <iterator>

namespace jitcache {
namespace {

constexpr std::string_view kMagic{"jcinput1", 8};
constexpr std::uint64_t kMaxItems = 1u << 16;  // headers, spec constants, variables: each

void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void put(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}

// Reads fields back; the first failure sticks and every later read returns empty.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  std::uint64_t u64() {
    if (failed_ || rest_.size() < 8) return fail(), 0;
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= std::uint64_t(static_cast<unsigned char>(rest_[i])) << (8 * i);
    rest_.remove_prefix(8);
    return value;
  }
  std::string bytes() {
    std::uint64_t size = u64();
    if (failed_ || size > rest_.size()) return fail(), std::string();
    std::string value(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return value;
  }
  std::uint64_t count() {
    std::uint64_t n = u64();
    if (n > kMaxItems) fail();
    return failed_ ? 0 : n;
  }
  bool ok() const { return !failed_; }
  bool at_end() const { return rest_.empty(); }

 private:
  void fail() { failed_ = true; }
  std::string_view rest_;
  bool failed_ = false;
};

std::optional<Api> api_named(std::string_view name) {
  for (Api api : {Api::opencl, Api::level_zero}) {
    if (name == to_string(api)) return api;
  }
  return std::nullopt;
}

std::optional<ProgramKind> kind_named(std::string_view name) {
  for (ProgramKind kind : {ProgramKind::source, ProgramKind::il, ProgramKind::compiled, ProgramKind::linked}) {
    if (name == to_string(kind)) return kind;
  }
  return std::nullopt;
}

// The whole file, when it is a regular file no larger than the cap.
std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string contents;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    contents.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (contents.size() > kMaxRecordedInputsBytes) return std::nullopt;
  }
  return contents;
}

}  // namespace

std::string encode_recorded_inputs(const RecordedInputs& inputs) {
  std::string out(kMagic);
  put(out, to_string(inputs.api));
  put(out, to_string(inputs.kind));
  put(out, inputs.input);
  put(out, inputs.options);
  put(out, inputs.working_dir);
  put_u64(out, inputs.headers.size());
  for (const RecordedHeader& header : inputs.headers) {
    put(out, header.name);
    put(out, header.path);
    put_u64(out, header.found ? 1 : 0);
    put(out, header.contents);
  }
  put_u64(out, inputs.spec_constants.size());
  for (const SpecConstant& constant : inputs.spec_constants) {
    put_u64(out, constant.id);
    put(out, constant.value);
  }
  put_u64(out, inputs.environment.size());
  for (const auto& [name, value] : inputs.environment) {
    put(out, name);
    put(out, value);
  }
  return out;
}

std::optional<RecordedInputs> decode_recorded_inputs(std::string_view bytes, std::string* why) {
  if (bytes.size() > kMaxRecordedInputsBytes) return *why = "record larger than its cap", std::nullopt;
  if (bytes.substr(0, kMagic.size()) != kMagic) return *why = "not an inputs record of this version", std::nullopt;
  Reader reader(bytes.substr(kMagic.size()));
  RecordedInputs inputs;
  std::optional<Api> api = api_named(reader.bytes());
  std::optional<ProgramKind> kind = kind_named(reader.bytes());
  inputs.input = reader.bytes();
  inputs.options = reader.bytes();
  inputs.working_dir = reader.bytes();
  for (std::uint64_t n = reader.count(), i = 0; i < n && reader.ok(); ++i) {
    RecordedHeader header;
    header.name = reader.bytes();
    header.path = reader.bytes();
    header.found = reader.u64() == 1;
    header.contents = reader.bytes();
    inputs.headers.push_back(std::move(header));
  }
  for (std::uint64_t n = reader.count(), i = 0; i < n && reader.ok(); ++i) {
    SpecConstant constant;
    std::uint64_t id = reader.u64();
    constant.id = static_cast<std::uint32_t>(id);
    constant.value = reader.bytes();
    if (id > UINT32_MAX) return *why = "spec constant id out of range", std::nullopt;
    inputs.spec_constants.push_back(std::move(constant));
  }
  for (std::uint64_t n = reader.count(), i = 0; i < n && reader.ok(); ++i) {
    std::string name = reader.bytes();
    std::string value = reader.bytes();
    inputs.environment.emplace_back(std::move(name), std::move(value));
  }
  if (!reader.ok() || !api || !kind) return *why = "truncated or malformed inputs record", std::nullopt;
  if (!reader.at_end()) return *why = "trailing bytes after the inputs record", std::nullopt;
  inputs.api = *api;
  inputs.kind = *kind;
  return inputs;
}

std::optional<RecordedInputs> record_inputs(const ProgramInputs& program, std::string working_dir, std::string* why) {
  RecordedInputs recorded;
  recorded.api = program.api;
  recorded.kind = program.kind;
  recorded.input = program.input;
  recorded.options = program.options;
  recorded.working_dir = std::move(working_dir);
  recorded.spec_constants = program.spec_constants;
  recorded.environment = program.environment;
  for (const HeaderDependency& header : program.headers) {
    RecordedHeader copy{header.name, header.path, header.found, {}};
    if (header.found) {
      std::optional<std::string> contents = read_file(header.path);
      if (!contents) return *why = "header " + header.path + " unreadable", std::nullopt;
      if (xxh3_128(*contents) != header.digest) return *why = "header " + header.path + " changed", std::nullopt;
      copy.contents = std::move(*contents);
    }
    recorded.headers.push_back(std::move(copy));
  }
  return recorded;
}

}  // namespace jitcache

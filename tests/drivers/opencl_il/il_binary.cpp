#include "il_binary.hpp"

#include <cstdio>
#include <sstream>

namespace test_il {
namespace {

constexpr const char* kMagic = "JITCACHE-TEST-IL-BINARY 1\n";

std::string body_of(const CompiledModule& module) {
  std::ostringstream out;
  out << kMagic << "device=" << module.device << "\nil=" << module.il_digest << "\nkernels=";
  for (size_t i = 0; i < module.kernel_names.size(); ++i) out << (i ? ";" : "") << module.kernel_names[i];
  out << "\nspec=" << describe_spec_values(module) << "\n";
  return out.str();
}

std::string field(const std::string& text, const std::string& name) {
  size_t start = text.find("\n" + name + "=");
  if (start == std::string::npos) return {};
  start += name.size() + 2;
  return text.substr(start, text.find('\n', start) - start);
}

}  // namespace

std::string fnv1a_hex(const void* data, std::size_t size) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<const unsigned char*>(data)[i]) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string describe_spec_values(const CompiledModule& module) {
  std::string text;
  for (const auto& [id, value] : module.spec_values) {
    text += (text.empty() ? "" : " ") + std::to_string(id) + "=" + std::to_string(value);
  }
  return text;
}

std::string encode_binary(const CompiledModule& module) {
  std::string body = body_of(module);
  return body + "checksum=" + fnv1a_hex(body.data(), body.size()) + "\n";
}

std::optional<CompiledModule> decode_binary(const std::string& binary) {
  if (binary.rfind(kMagic, 0) != 0) return std::nullopt;
  size_t checksum_at = binary.rfind("checksum=");
  if (checksum_at == std::string::npos || binary.substr(checksum_at) !=
                                              "checksum=" + fnv1a_hex(binary.data(), checksum_at) + "\n") {
    return std::nullopt;
  }
  std::string body = binary.substr(0, checksum_at);
  CompiledModule module;
  module.device = field(body, "device");
  module.il_digest = field(body, "il");
  std::istringstream kernels(field(body, "kernels"));
  for (std::string name; std::getline(kernels, name, ';');) module.kernel_names.push_back(name);
  std::istringstream spec(field(body, "spec"));
  for (std::string pair; spec >> pair;) {
    size_t equals = pair.find('=');
    if (equals == std::string::npos) return std::nullopt;
    module.spec_values[std::stoul(pair.substr(0, equals))] = std::stoull(pair.substr(equals + 1));
  }
  return module;
}

}  // namespace test_il

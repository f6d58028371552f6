#include "capture/load_back_check.hpp"

#include <cstdlib>
#include <string_view>

#include "core/replay_mark.hpp"

namespace jitcache {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ";") + name;
  return text;
}

}  // namespace

std::string kernel_names_mismatch(const std::vector<std::string>& loaded, const std::vector<std::string>& built) {
  if (loaded == built) return {};
  return "the loaded binary has kernels [" + joined(loaded) + "], the build had [" + joined(built) + "]";
}

void break_binary_for_tests(std::string& binary) {
  if (!replay_mark()) return;
  const char* breaks = std::getenv("JITCACHE_TEST_REPLAY_BREAKS_BINARY");
  if (!breaks || std::string_view(breaks) != "1") return;
  for (std::size_t i = 0; i < binary.size() && i < 16; ++i) binary[i] = static_cast<char>(~binary[i]);
}

}  // namespace jitcache

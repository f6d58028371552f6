#include "core/lookup.hpp"

namespace jitcache {

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::hit: return "hit";
    case Verdict::miss: return "miss";
    case Verdict::stale: return "stale";
    case Verdict::uncacheable: return "uncacheable";
    case Verdict::failed: return "failed";
  }
  return "?";
}

std::optional<std::string> recorded_build_log(const nlohmann::json& sidecar) {
  auto it = sidecar.find("build_log");
  if (it == sidecar.end() || !it->is_string()) return std::nullopt;
  const std::string& log = it->get_ref<const std::string&>();
  if (log.size() >= kBuildLogExcerpt) return std::nullopt;  // may have been cut
  return log;
}

std::shared_ptr<const std::string> answers_text(const nlohmann::json& answers) {
  return std::make_shared<const std::string>(answers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::memory: return "memory";
    case Tier::pack: return "pack";
    case Tier::disk: return "disk";
    case Tier::remote: return "remote";
    case Tier::none: break;
  }
  return "";
}

void Lookup::hit_in(Tier from, std::string entry_binary, nlohmann::json entry_sidecar,
                    std::shared_ptr<const std::string> entry_answers) {
  verdict = Verdict::hit;
  tier = from;
  binary = std::move(entry_binary);
  sidecar = std::move(entry_sidecar);
  answers = std::move(entry_answers);
}

void Lookup::hit_in_memory(MemoryValue value) {
  memory = std::move(value);
  // With the adapter's object the binary is not needed (a load is skipped); the memory tier keeps
  // no sidecar, only what a hit's trace reads.
  hit_in(Tier::memory, !memory.object && memory.binary ? *memory.binary : std::string(),
         {{"compile_time_us", memory.compile_us}}, memory.answers);
}
}  // namespace jitcache

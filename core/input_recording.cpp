#include "core/input_recording.hpp"

#include "hashing/recorded_inputs.hpp"

namespace jitcache {

std::optional<std::string> encode_program_inputs(const ProgramInputs& program, const std::string& working_dir,
                                                 std::string* why) {
  // A compiled object or a link names inputs the record cannot hold (other programs' objects).
  if (program.kind != ProgramKind::source && program.kind != ProgramKind::il) {
    *why = std::string("a ") + to_string(program.kind) + " program cannot be replayed";
    return std::nullopt;
  }
  std::optional<RecordedInputs> recorded = record_inputs(program, working_dir, why);
  if (!recorded) return std::nullopt;
  std::string bytes = encode_recorded_inputs(*recorded);
  if (bytes.size() > kMaxRecordedInputsBytes) {
    *why = "inputs record larger than its cap";
    return std::nullopt;
  }
  return bytes;
}

std::optional<Digest128> store_recorded_inputs(DiskStore& store, const ProgramInputs& program,
                                               const std::string& working_dir, std::string* why,
                                               std::string* encoded) {
  std::optional<std::string> bytes = encode_program_inputs(program, working_dir, why);
  if (!bytes) return std::nullopt;
  Digest128 digest;
  SaveResult saved = store.save_inputs(*bytes, &digest);
  if (saved.status != SaveStatus::stored) {
    *why = saved.reason;
    return std::nullopt;
  }
  if (encoded) *encoded = std::move(*bytes);
  return digest;
}

void forget_source_text(nlohmann::json* sidecar) {
  auto components = sidecar->find("components");
  if (components == sidecar->end() || !components->is_object()) return;
  auto input = components->find("input");
  if (input == components->end() || !input->is_object()) return;
  auto value = input->find("value");
  if (value != input->end() && value->is_object()) value->erase("text");
}

}  // namespace jitcache

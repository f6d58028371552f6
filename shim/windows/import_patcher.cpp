#include "shim/windows/import_patcher.hpp"

#include <cstring>

namespace jitcache::windows {
namespace {

bool same_name_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  }
  return true;
}

const IMAGE_IMPORT_DESCRIPTOR* first_import(const unsigned char* base) {
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  if (dos->e_magic != IMAGE_DOS_SIGNATURE) return nullptr;
  const auto* nt = reinterpret_cast<const IMAGE_NT_HEADERS*>(base + dos->e_lfanew);
  if (nt->Signature != IMAGE_NT_SIGNATURE) return nullptr;
  const IMAGE_DATA_DIRECTORY& imports = nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
  if (imports.VirtualAddress == 0 || imports.Size == 0) return nullptr;
  return reinterpret_cast<const IMAGE_IMPORT_DESCRIPTOR*>(base + imports.VirtualAddress);
}

void write_entry(IMAGE_THUNK_DATA* slot, void* function) {
  DWORD old_protection = 0;
  if (!VirtualProtect(&slot->u1.Function, sizeof slot->u1.Function, PAGE_READWRITE, &old_protection)) return;
  slot->u1.Function = reinterpret_cast<ULONG_PTR>(function);
  VirtualProtect(&slot->u1.Function, sizeof slot->u1.Function, old_protection, &old_protection);
}

}  // namespace

int patch_imports(HMODULE module, std::string_view dll_name, std::span<const Replacement> replacements) {
  auto* base = reinterpret_cast<unsigned char*>(module);
  int patched = 0;
  for (const auto* import = first_import(base); import && import->Name != 0; ++import) {
    if (!same_name_ignoring_case(reinterpret_cast<const char*>(base + import->Name), dll_name)) continue;
    // The names live in the original (lookup) thunks; the addresses the code calls, in FirstThunk.
    if (import->OriginalFirstThunk == 0) continue;  // no names to match against
    const auto* names = reinterpret_cast<const IMAGE_THUNK_DATA*>(base + import->OriginalFirstThunk);
    auto* slots = reinterpret_cast<IMAGE_THUNK_DATA*>(base + import->FirstThunk);
    for (; names->u1.AddressOfData != 0; ++names, ++slots) {
      if (IMAGE_SNAP_BY_ORDINAL(names->u1.Ordinal)) continue;
      const auto* by_name = reinterpret_cast<const IMAGE_IMPORT_BY_NAME*>(base + names->u1.AddressOfData);
      const char* name = reinterpret_cast<const char*>(by_name->Name);
      for (const Replacement& replacement : replacements) {
        if (std::strcmp(name, replacement.name) != 0) continue;
        if (slots->u1.Function != reinterpret_cast<ULONG_PTR>(replacement.function)) {
          write_entry(slots, replacement.function);
          ++patched;
        }
      }
    }
  }
  return patched;
}

}  // namespace jitcache::windows

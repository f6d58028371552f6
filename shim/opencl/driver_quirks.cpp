#include "shim/opencl/driver_quirks.hpp"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "core/log.hpp"
#include "shim/opencl/next_functions.hpp"
#include "shim/opencl/pocl_cache_folder.hpp"
#include "shim/opencl/target_identity.hpp"

namespace jitcache::opencl {
namespace {

// Windows has no mkdtemp, and PoCL on Windows is rare: there the binary is loaded as it is.
#ifndef _WIN32
// PoCL's binary header (lib/CL/pocl_binary.c): "poclbin\0", u64 device id, u32 format version,
// ..., then the program's build hash: 41 bytes naming the program's folder below PoCL's cache dir
// ("_UNCACHED_xxxxxx" when its kernel cache is off, "AB/CDEF..." when on). Formats 6 and 7
// (PoCL 1.x) have it at byte 32; format 9 (PoCL 3.x, one more u32 before it) at byte 36. Other
// formats are left alone.
constexpr std::size_t kVersionOffset = 16;
constexpr std::size_t kFolderField = 41;
constexpr char kScratchPrefix[] = "_UNCACHED_";

std::size_t folder_field_offset(std::uint32_t version) {
  switch (version) {
    case 6:
    case 7:
      return 32;
    case 9:
      return 36;
    default:
      return 0;
  }
}

// Where the folder name sits in `binary`, or 0 when it is not a PoCL binary of a known format
// whose field holds a folder name as PoCL writes them.
std::size_t folder_field(const std::string& binary) {
  if (binary.size() < 64 || std::memcmp(binary.data(), "poclbin", 8) != 0) return 0;
  std::uint32_t version = 0;
  std::memcpy(&version, binary.data() + kVersionOffset, sizeof version);  // little-endian hosts only
  std::size_t offset = folder_field_offset(version);
  if (offset == 0 || binary.size() < offset + kFolderField) return 0;
  std::string_view field(binary.data() + offset, kFolderField);
  std::size_t length = field.find('\0');
  if (length == 0 || length == std::string_view::npos) return 0;
  for (char c : field.substr(0, length)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '/') return 0;
  }
  return offset;
}

// The folders made for loaded programs. PoCL deletes one with its program; the programs the
// memory tier keeps live until exit, so what is left of them is deleted then, as PoCL would have.
struct MadeFolders {
  std::mutex mutex;
  std::vector<std::filesystem::path> folders;
};

MadeFolders& made_folders() {
  static auto* made = new MadeFolders;  // never destroyed: the exit handler uses it
  return *made;
}

void remove_made_folders_at_exit() {
  std::lock_guard lock(made_folders().mutex);
  std::error_code ec;
  for (const std::filesystem::path& folder : made_folders().folders) std::filesystem::remove_all(folder, ec);
}

void note_made_folder(const std::filesystem::path& folder) {
  static std::once_flag exit_handler;
  std::call_once(exit_handler, [] { std::atexit(remove_made_folders_at_exit); });
  std::lock_guard lock(made_folders().mutex);
  auto& folders = made_folders().folders;
  // Forget the folders PoCL already deleted with their programs, so the list stays short.
  std::erase_if(folders, [](const std::filesystem::path& f) { std::error_code ec; return !std::filesystem::exists(f, ec); });
  folders.push_back(folder);
}

// A new scratch folder as PoCL makes them ("<dir>/_UNCACHED_XXXXXX", mkdtemp): unique among the
// live programs of every process sharing the dir. Its name, or empty.
std::string make_scratch_folder(std::filesystem::path* made) {
  std::filesystem::path dir = pocl_cache_folder();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string pattern = (dir / (std::string(kScratchPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) return {};
  *made = pattern;
  note_made_folder(*made);
  return made->filename().string();
}
#endif

// The binary to load for `device`: a copy naming a folder of its own where the scratch-folder
// quirk applies (`made` is then that folder), else the cached bytes as they are.
const std::string* binary_to_load(cl_device_id device, const std::string& cached, std::string& copy,
                                  std::filesystem::path* made) {
#ifdef _WIN32
  (void)device, (void)copy, (void)made;
  return &cached;
#else
  const std::size_t offset = folder_field(cached);
  if (!pocl_kernel_cache_off() || offset == 0 || !target_of(device, next()).pocl) return &cached;
  std::string folder = make_scratch_folder(made);
  if (folder.empty() || folder.size() >= kFolderField) {
    log_warning("no PoCL scratch folder could be made in " + pocl_cache_folder().string() +
                ": a cached binary is loaded into the folder its build used (" +
                std::string(kPoclSharedScratchFolder.name) + ")");
    return &cached;
  }
  copy = cached;
  std::memset(copy.data() + offset, 0, kFolderField);
  std::memcpy(copy.data() + offset, folder.data(), folder.size());
  return &copy;
#endif
}

}  // namespace

bool rebuilds_cheaply([[maybe_unused]] cl_device_id device) {
#ifdef _WIN32
  return false;  // no capture helper on Windows
#else
  return target_of(device, next()).pocl && !pocl_kernel_cache_off();
#endif
}

cl_program create_program_from_cache(cl_context context, const std::vector<cl_device_id>& devices,
                                     const std::vector<const std::string*>& binaries, cl_int* status) {
  std::vector<std::string> copies(binaries.size());
  std::vector<std::filesystem::path> folders(binaries.size());
  std::vector<size_t> lengths;
  std::vector<const unsigned char*> pointers;
  for (size_t d = 0; d < binaries.size(); ++d) {
    const std::string* binary = binary_to_load(devices[d], *binaries[d], copies[d], &folders[d]);
    lengths.push_back(binary->size());
    pointers.push_back(reinterpret_cast<const unsigned char*>(binary->data()));
  }
  auto count = static_cast<cl_uint>(devices.size());
  std::vector<cl_int> binary_status(count, CL_SUCCESS);
  cl_program program = next().clCreateProgramWithBinary(context, count, devices.data(), lengths.data(),
                                                        pointers.data(), binary_status.data(), status);
  if (!program) {
    // PoCL deletes the folder with the program; a program never made leaves it to us.
    std::error_code ec;
    for (const std::filesystem::path& folder : folders) {
      if (!folder.empty()) std::filesystem::remove_all(folder, ec);
    }
  }
  return program;
}

namespace {

// Whether a device of `devices` is served by the driver that `flag` of its target names.
bool any_device(const std::vector<cl_device_id>& devices, bool OpenClTarget::*flag) {
  for (cl_device_id device : devices) {
    if (target_of(device, next()).*flag) return true;
  }
  return false;
}

}  // namespace

std::string binary_read_risk(const std::vector<cl_device_id>& devices, const std::vector<std::string>& kernel_names) {
  if (!any_device(devices, &OpenClTarget::pocl)) return {};
  // PoCL writes "<kernel name>.so" (pocl_cache_final_binary_path); a file name holds 255 bytes
  // on every file system PoCL's cache lives on (NAME_MAX).
  constexpr std::size_t kLongestName = 255 - 3;
  for (const std::string& name : kernel_names) {
    if (name.size() > kLongestName) {
      // Stable text: it also names the stats counter.
      return std::string(kPoclLongKernelName.name) + ": a kernel name is longer than 252 bytes (PoCL aborts "
             "linking its work-group function when the binary is read)";
    }
  }
  return {};
}

std::string source_build_risk(const std::vector<cl_device_id>& devices, const std::string& source) {
  if (!any_device(devices, &OpenClTarget::nvidia)) return {};
  constexpr std::size_t kLongestName = 255;
  std::size_t run = 0;
  for (char c : source) {
    run = std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? run + 1 : 0;
    if (run > kLongestName) {
      return std::string(kNvidiaLongKernelName.name) + ": an identifier is longer than 255 characters (NVIDIA's "
             "driver corrupts its heap building a kernel of such a name)";
    }
  }
  return {};
}

}  // namespace jitcache::opencl

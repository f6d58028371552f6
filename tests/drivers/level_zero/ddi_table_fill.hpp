// How the exported getters fill the DDI tables the loader hands them.
#pragma once

#include <cstring>
#include <type_traits>

#include <ze_api.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "fill_with_unsupported relies on the x86-64 SysV or AArch64 calling convention"
#endif

namespace jitcache::test_ze {

// Stands in for every DDI entry this driver does not implement.
ze_result_t unsupported_entry();

// Points every slot of a DDI table at unsupported_entry. The tables are plain structs of entry
// pointers, all returning ze_result_t under the C calling convention, where the caller owns the
// arguments; an entry that ignores its arguments is therefore safe to reach through any slot's
// pointer type on the ABIs above. Listing hundreds of slots by hand would add nothing but typos.
template <typename Table>
void fill_with_unsupported(Table& table) {
  using Entry = decltype(&unsupported_entry);
  static_assert(std::is_trivially_copyable_v<Table> && sizeof(Table) % sizeof(Entry) == 0,
                "a DDI table is a struct of entry pointers");
  const Entry entry = &unsupported_entry;
  auto* slots = reinterpret_cast<unsigned char*>(&table);
  for (std::size_t offset = 0; offset < sizeof(Table); offset += sizeof(Entry)) {
    std::memcpy(slots + offset, &entry, sizeof(Entry));
  }
}

// The loader sizes each table for its own API version, so a table from an older loader may be
// smaller than this driver's; like real drivers, refuse loaders older than the headers we build with.
inline bool loader_version_supported(ze_api_version_t version) {
  return ZE_MAJOR_VERSION(version) == ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT) &&
         ZE_MINOR_VERSION(version) >= ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT);
}

// The body of every exported getter: validate, default every slot, then install what is implemented.
template <typename Table, typename Install>
ze_result_t provide_table(ze_api_version_t version, Table* table, Install install) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!loader_version_supported(version)) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  fill_with_unsupported(*table);
  install(*table);
  return ZE_RESULT_SUCCESS;
}

}  // namespace jitcache::test_ze

// Defines an exported getter for a table in which this driver implements nothing.
#define JITCACHE_TEST_ZE_UNSUPPORTED_TABLE(getter, table_type)                                 \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type* table) { \
    return jitcache::test_ze::provide_table(version, table, [](table_type&) {});               \
  }

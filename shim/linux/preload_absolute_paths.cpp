// Before the app runs (and may change directory): relative path settings in the environment are
// made absolute against the directory it started in (core/absolute_paths.hpp).
#include "core/absolute_paths.hpp"

namespace {

__attribute__((constructor)) void make_paths_absolute_at_load() { jitcache::make_path_variables_absolute(); }

}  // namespace

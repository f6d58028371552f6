// The trust rule and its error codes, shared by the POSIX and Windows file operations.
#include "store/files/file_ops.hpp"

namespace jitcache::fileops {
namespace {

class TrustCategory : public std::error_category {
 public:
  const char* name() const noexcept override { return "jitcache-trust"; }
  std::string message(int code) const override {
    switch (static_cast<TrustError>(code)) {
      case TrustError::foreign_owner: return "owned by another user (neither this user nor root)";
      case TrustError::writable_by_others: return "writable by group or others";
      case TrustError::not_regular: return "not a regular file";
      case TrustError::not_directory: return "not a directory";
    }
    return "untrusted";
  }
};

const TrustCategory& trust_category() {
  static const TrustCategory category;
  return category;
}

}  // namespace

std::error_code make_error_code(TrustError error) { return {static_cast<int>(error), trust_category()}; }

bool is_trust_error(const std::error_code& error) { return &error.category() == &trust_category(); }

// Root may change anything on the machine anyway: trusting its files (a read-only cache an
// administrator prepared) adds no exposure. Anyone else's file, or one another user may write,
// could hold a binary built from other inputs.
std::error_code check_trusted(const FileInfo& info) {
  if (info.owner != current_user() && info.owner != 0) return make_error_code(TrustError::foreign_owner);
  if ((info.mode & 0022) != 0) return make_error_code(TrustError::writable_by_others);
  return {};
}

}  // namespace jitcache::fileops

#include "store/remote/remote_schemes.hpp"

#include "store/remote/redis_scheme.hpp"
#ifndef _WIN32  // no libcurl and no POSIX file calls there: Redis alone, whose connection is refused
#include "store/remote/file_scheme.hpp"
#include "store/remote/http_scheme.hpp"
#include "store/remote/s3_scheme.hpp"
#endif

namespace jitcache {

RemoteSchemes remote_schemes() {
  static const RemoteScheme* const kSchemes[] = {
      &kRedisScheme,
      &kRedisUnixScheme,
#ifndef _WIN32
      &kHttpScheme,
      &kHttpsScheme,
      &kFileScheme,
      &kS3Scheme,
#endif
  };
  return kSchemes;
}

}  // namespace jitcache

// Every URL scheme this build speaks, one registration line each (remote_schemes.cpp). The engine
// reaches the list through the tiers' factory (store/tiers/tiers.hpp); a scheme's row, endpoint,
// client and doctor check live in its own files (docs/decisions/remote.md, "A remote scheme is
// one registration").
#pragma once

#include "store/remote_api/remote_url.hpp"

namespace jitcache {

RemoteSchemes remote_schemes();

}  // namespace jitcache

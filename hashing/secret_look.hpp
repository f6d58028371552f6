// Whether an environment variable looks like it holds a credential, by its name or by its value.
// Such a variable is keyed only when env_keys names it whole (hashing/environment.hpp): a keyed
// value travels in sidecars, recorded inputs, traces and to remotes.
#pragma once

#include <string_view>

namespace jitcache {

// Names that hold credentials by convention (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD,
// MYSQL_PWD, API_KEY, CI_JOB_JWT, SSHPASS, SENTRY_DSN): words of the name, split at '_', compared
// without case.
bool name_looks_like_a_secret(std::string_view name);

// Values that carry a credential whatever the variable is called: a URL with user:password@, a
// URL whose path holds an opaque token (a webhook), a `name=value` pair with a secret-looking name
// (`AccountKey=`, `?password=`, `&sig=`), or a token of a well-known service (`sk_live_`, `ghp_`).
bool value_looks_like_a_secret(std::string_view value);

}  // namespace jitcache

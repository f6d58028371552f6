#!/usr/bin/env bash
# jitcache --version, the generated man pages and bash completion, and `jitcache doctor`
# (issue 18), and docs/settings.md's table (issue 41).
# Usage: tool_docs_test.sh JITCACHE_TOOL OPENCL_EXAMPLE DOCS_DIR SOURCE_DIR
set -euo pipefail
tool=$1 example=$2 docs=$3 source=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d /tmp/jitcache-docs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export JITCACHE_DIR=$tmp/cache POCL_KERNEL_CACHE=0

# docs/settings.md's table is the settings table's, as generated (a setting is declared once).
diff <("$tool" generate settings-table) \
  <(sed -n '/^<!-- settings-table: generated/,/^<!-- settings-table end/{/^<!--/!p}' "$source/docs/settings.md") >&2 ||
  fail "docs/settings.md's table differs from \`jitcache generate settings-table\`"

# --version: version, commit, build type, features; exit 0.
version=$("$tool" --version) || fail "--version exited $?"
[[ $version =~ ^jitcache\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ [0-9a-f]{7,}.*,\ [A-Za-z]+\) ]] || fail "--version: $version"
[[ $version == *"features: opencl"* ]] || fail "--version lists no features: $version"

# The man page names every subcommand and every option that --help shows (no drift).
subcommands=$("$tool" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
[ -n "$subcommands" ] || fail "no subcommands in --help"
for sub in $subcommands; do
  grep -q "^\.SS \"jitcache $sub" "$docs/jitcache.1" || fail "jitcache.1 lacks the $sub command"
  for option in $("$tool" "$sub" --help | grep -oE '^\s+(-[a-z],)?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
    grep -qF -- "${option//-/\\-}" "$docs/jitcache.1" || fail "jitcache.1 lacks $sub $option"
  done
done
# Nested commands (jitcache pack create ...) and their options.
for nested in $("$tool" pack --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}'); do
  grep -q "^\.SS \"jitcache pack $nested" "$docs/jitcache.1" || fail "jitcache.1 lacks pack $nested"
  for option in $("$tool" pack "$nested" --help | grep -oE '^\s+(-[a-z],)?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
    grep -qF -- "${option//-/\\-}" "$docs/jitcache.1" || fail "jitcache.1 lacks pack $nested $option"
  done
done
for variable in $("$tool" config --json | sed -n 's/^ *"env": "\(JITCACHE_[A-Z_]*\)".*/\1/p'); do
  grep -qF "${variable}" "$docs/jitcache-config.5" || fail "jitcache-config.5 lacks $variable"
done
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$docs/jitcache.1" 2>&1 >/dev/null | grep -q . && fail "man reports problems in jitcache.1"
fi

# Completion: subcommands, options, and entry keys from the cache.
"$tool" run -- "$example" >/dev/null 2>&1 || fail "the example failed under jitcache run"
# Its misses are stored by capture helpers (capture = auto on PoCL), each holding the key's build
# lock until its entry is stored: take each lock once (opened read-only: never created here).
for lock in "$JITCACHE_DIR"/locks/*.lock; do
  if exec {held}<"$lock" 2>/dev/null; then flock "$held"; exec {held}<&-; fi
done
complete_line() {  # the words of a command line, the last one being completed
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _jitcache
  echo "${COMPREPLY[*]}"
}
PATH=$(dirname "$tool"):$PATH
# shellcheck disable=SC1090,SC1091
source "$docs/jitcache.bash-completion"
[[ " $(complete_line jitcache d) " == *" doctor "* ]] || fail "no completion for doctor"
[[ $(complete_line jitcache ls --s) == "--sort" ]] || fail "no completion for ls --sort"
[[ $(complete_line jitcache pack cr) == "create" ]] || fail "no completion for pack create"
[[ " $(complete_line jitcache pack create --ob) " == *" --obfuscate "* ]] || fail "no completion for pack create --obfuscate"
key=$(basename "$(find "$JITCACHE_DIR" -name '*.entry' | head -1)" .entry)
[ -n "$key" ] || fail "the example stored nothing"
[[ " $(complete_line jitcache show "${key:0:6}") " == *" $key "* ]] || fail "no key completion for show"

# doctor: exit 0 on a sound setup, 1 with the reason and a fix on a world-writable root.
"$tool" doctor "$example" >"$tmp/doctor.txt" || fail "doctor exited $? on a sound setup: $(cat "$tmp/doctor.txt")"
grep -q "links libOpenCL directly" "$tmp/doctor.txt" || fail "doctor did not judge the program"
"$tool" doctor --json | python3 -c 'import json,sys; d = json.load(sys.stdin); assert d["ok"] and d["checks"], d'
chmod 777 "$JITCACHE_DIR"
status=0; "$tool" doctor --json >"$tmp/bad.json" || status=$?
[ "$status" = 1 ] || fail "doctor exited $status on a world-writable root"
python3 - "$tmp/bad.json" <<'PY'
import json, sys
checks = json.load(open(sys.argv[1]))["checks"]
root = [c for c in checks if c["check"] == "cache root"][0]
assert root["status"] == "fail" and root["fix"], root
PY
echo "tool docs test: all checks passed"

#!/usr/bin/env bash
# Builds the real Consul agent (v1.14.8, MPL-2.0) used by the Consul
# integration tests, from the separate Go module integration/consulagent,
# and caches it by version. Prints the binary's path on stdout. Fast when the
# binary is cached; the first build takes several minutes of CPU.
#
#   GANTRY_CONSUL_BIN=$(scripts/setup/consul.sh) go test ./integration/consul/...
#
# The tests find the cached binary on their own (same path rule as below).
set -euo pipefail

version=1.14.8
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gantry/consul-$version
bin=$cache/consul

# grep reads the whole output (no -q): with -q it exits at the first line and
# the agent, still writing, dies of SIGPIPE, which pipefail reports as failure.
if [ -x "$bin" ] && "$bin" version 2>/dev/null | grep "^Consul v$version\$" >/dev/null; then
	echo "$bin"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp "$cache/consul.XXXXXX")
echo "consul.sh: building the Consul $version agent once for the integration tests (downloads its modules, then compiles: ~8 min on 2 cores); cached in $cache, later runs take a second" >&2
started=$(date +%s)
# A progress line every 30 s: "go build" is silent while it compiles.
( while sleep 30; do echo "consul.sh: still building Consul $version ($(($(date +%s) - started))s)..." >&2; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null; rm -f "$tmp"' EXIT
# Twice at most: a first build on a fresh machine has failed once on a
# module download that the second attempt fetched.
for attempt in 1 2; do
	(cd "$root/integration/consulagent" && go build -trimpath -o "$tmp" .) 2>&1 | grep -v '^go: downloading' >&2 || true
	[ ! -s "$tmp" ] || break
	echo "consul.sh: go build attempt $attempt failed" >&2
done
# Stop the ticker once, and forget it: a second kill at exit could reach
# another process that got its pid by then (pid_max is often 32 768).
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
trap 'rm -f "$tmp"' EXIT
[ -s "$tmp" ] || { echo "consul.sh: go build failed (see above)" >&2; exit 1; }
echo "consul.sh: built Consul $version in $(($(date +%s) - started))s" >&2
"$tmp" version | grep "^Consul v$version\$" >/dev/null || {
	echo "consul.sh: built binary does not report Consul v$version" >&2
	exit 1
}
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"

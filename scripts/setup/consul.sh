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
trap 'rm -f "$tmp"' EXIT
(cd "$root/integration/consulagent" && go build -trimpath -o "$tmp" .) >&2
"$tmp" version | grep "^Consul v$version\$" >/dev/null || {
	echo "consul.sh: built binary does not report Consul v$version" >&2
	exit 1
}
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"

#!/usr/bin/env bash
# Builds Pebble, Let's Encrypt's ACME test server (v2.10.3, MPL-2.0), and
# its pebble-challtestsrv (the DNS server Pebble resolves names with), used
# by the ACME integration tests, from the separate Go module
# integration/pebbletool, and caches both by version. Prints the directory
# holding the two binaries on stdout. Fast when cached.
#
#   GANTRY_PEBBLE_DIR=$(scripts/setup/pebble.sh) go test ./integration/acme/...
#
# The tests find the cached binaries on their own (same path rule as below).
set -euo pipefail

version=2.10.3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gantry/pebble-$version

if [ -x "$cache/pebble" ] && [ -x "$cache/pebble-challtestsrv" ]; then
	echo "$cache"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$root/integration/pebbletool" && go build -trimpath -o "$tmp/" \
	github.com/letsencrypt/pebble/v2/cmd/pebble \
	github.com/letsencrypt/pebble/v2/cmd/pebble-challtestsrv) >&2
"$tmp/pebble" -version >/dev/null 2>&1 || {
	echo "pebble.sh: built pebble does not run" >&2
	exit 1
}
mv "$tmp/pebble-challtestsrv" "$cache/pebble-challtestsrv"
mv "$tmp/pebble" "$cache/pebble"
echo "$cache"

#!/usr/bin/env bash
# Builds h2spec (github.com/summerwind/h2spec v2.2.1, MIT), the HTTP/2
# conformance tester run against Gantry by integration/e2e's
# TestH2specConformance, from the separate Go module integration/h2spectool,
# and caches it by version. Prints the directory holding the binary on
# stdout. Fast when cached.
#
#   GANTRY_H2SPEC_DIR=$(scripts/setup/h2spec.sh) go test -run TestH2spec ./integration/e2e/
#
# The test finds the cached binary on its own (same path rule as below).
set -euo pipefail

version=2.2.1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gantry/h2spec-$version

if [ -x "$cache/h2spec" ]; then
	echo "$cache"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$root/integration/h2spectool" && go build -trimpath -o "$tmp/" github.com/summerwind/h2spec/cmd/h2spec) >&2
"$tmp/h2spec" --dryrun >/dev/null 2>&1 || {
	echo "h2spec.sh: built h2spec does not run" >&2
	exit 1
}
mv "$tmp/h2spec" "$cache/h2spec"
echo "$cache"

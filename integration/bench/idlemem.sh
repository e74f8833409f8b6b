#!/usr/bin/env bash
# Idle memory of gantry with the quickstart configuration (issue 27's
# target: idle RSS <= 25 MB): builds gantry as scripts/quickstart.sh does
# (or takes GANTRY_BIN), starts it with examples/quickstart/gantry.yml on
# 127.0.0.1, waits until /ping answers, lets it idle IDLE_WAIT seconds and
# reads /proc/<pid>/smaps_rollup. Prints one line per run:
#
#   idle-rss <cold|warm> rss=<KiB> anon=<KiB> file=<KiB> file_pmd=<KiB>
#
# and, once: the binary's size, its package initialisers (count, and the
# bytes they allocate, from GODEBUG=inittrace=1) and the packages it links.
#
# file is the binary's pages mapped into gantry (its code and read-only
# data touched, at the kernel's fault granularity: since the first
# configuration was applied, when gantry gives back its start-up pages,
# internal/exepages); anon is the Go heap, stacks and runtime. Gantry's
# forced GC (every 2 minutes) maps more of them again: IDLE_WAIT=150 shows
# that later state. "cold" first evicts the page cache of a
# private copy of the binary (posix_fadvise DONTNEED on that copy only),
# so the pages mapped are those gantry touches plus the kernel's
# read-around; "warm" runs the same copy again with its pages cached, where
# a kernel with large folios may map whole 2 MB blocks (file_pmd).
#
# Environment: GANTRY_BIN (skip the build), WEB_PORT (18000), API_PORT
# (18080), IDLE_WAIT (10), RUNS (2 of each).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
: "${WEB_PORT:=18000}" "${API_PORT:=18080}" "${IDLE_WAIT:=10}" "${RUNS:=2}"
command -v python3 >/dev/null || { echo "idlemem.sh: python3 is needed (posix_fadvise)" >&2; exit 1; }
command -v curl >/dev/null || { echo "idlemem.sh: curl is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gantry-idlemem.XXXXXX")
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${GANTRY_BIN:-}" ]; then
	cp "$GANTRY_BIN" "$work/gantry"
else
	echo "idlemem.sh: building gantry with scripts/quickstart.sh's flags..." >&2
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/gantry" ./cmd/gantry
fi
size=$(stat -c %s "$work/gantry")
inits=$(GODEBUG=inittrace=1 "$work/gantry" version 2>&1 >/dev/null | awk '/^init /{n++; b+=$8} END{printf "%d inits, %d bytes allocated", n, b}')
if [ -n "${GANTRY_BIN:-}" ]; then
	deps="packages linked: not counted for GANTRY_BIN"
else
	deps="$(go list -deps ./cmd/gantry | wc -l) packages linked (go list -deps ./cmd/gantry)"
fi
echo "binary: $size bytes; $inits; $deps"

run() { # run cold|warm
	if [ "$1" = cold ]; then
		python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$work/gantry"
	fi
	rm -f "$work/gantry.db"
	GANTRY_ENTRYPOINTS_WEB_ADDRESS="127.0.0.1:$WEB_PORT" \
	GANTRY_ENTRYPOINTS_TRAEFIK_ADDRESS="127.0.0.1:$API_PORT" \
	GANTRY_STORE_PATH="$work/gantry.db" \
		"$work/gantry" --configFile=examples/quickstart/gantry.yml >"$work/log" 2>&1 &
	pid=$!
	local ok=
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || break
		curl -fsS -o /dev/null "http://127.0.0.1:$API_PORT/ping" 2>/dev/null && ok=1 && break
		sleep 0.2
	done
	if [ -z "$ok" ]; then
		echo "idlemem.sh: gantry did not answer /ping within 60 s:" >&2
		cat "$work/log" >&2
		exit 1
	fi
	sleep "$IDLE_WAIT"
	awk -v mode="$1" '/^Rss:|^Anonymous:|^FilePmdMapped:/{v[$1]=$2}
		END{printf "idle-rss %s rss=%d anon=%d file=%d file_pmd=%d (KiB)\n", mode, v["Rss:"], v["Anonymous:"], v["Rss:"]-v["Anonymous:"], v["FilePmdMapped:"]}' "/proc/$pid/smaps_rollup"
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}
for _ in $(seq 1 "$RUNS"); do
	run cold
	run warm
done

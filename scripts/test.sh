#!/usr/bin/env bash
# Runs every check Gantry's CI runs, from a fresh clone:
#   1. scripts/setup/*.sh   installs what integration tests need (dockerd,
#                           Consul, Chromium, the TCP/UDP servers and clients;
#                           each script is idempotent)
#   2. gofmt -l             no unformatted Go file
#   3. go vet ./...
#   4. go test -race        on the core packages (config, router, providers,
#                           dataplane, store, dashboard)
#   5. go test              the allocation assertions once without -race
#   6. go test -fuzz        the HTTP/1.1 parser, 150 000 executions per target
#   7. go test              on every other package, integration included
# Every step runs even when an earlier one failed; the script ends with one
# summary line and exits non-zero if any step failed.
#
# Environment: GO (default "go"), TEST_FLAGS (extra `go test` flags, e.g. -v
# or "-run TestX"), SKIP_SETUP=1 to skip step 1.
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
if ! command -v "$GO" >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
read -r -a extra <<<"${TEST_FLAGS:-}"
failed=()
start=$(date +%s)

step() { printf '\n=== %s (%ds)\n' "$1" $(($(date +%s) - start)); }

if [ "${SKIP_SETUP:-}" != 1 ]; then
	echo "test.sh: installing what the integration tests need (once; later runs take seconds). SKIP_SETUP=1 skips it."
	for s in scripts/setup/*.sh; do
		[ -e "$s" ] || continue
		step "setup: $s"
		bash "$s" || failed+=("setup $s")
	done
fi

step "gofmt"
unformatted=$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	printf 'gofmt would change:\n%s\n' "$unformatted"
	failed+=(gofmt)
fi

step "go vet ./..."
"$GO" vet ./... || failed+=(vet)

# Core packages get the race detector; the pattern list keeps only the
# directories that exist, so the script works while packages are added.
core=()
for d in config router providers dataplane store dashboard; do
	[ -d "$d" ] && core+=("./$d/...")
done
mapfile -t all < <("$GO" list ./...)
mapfile -t corepkgs < <("$GO" list "${core[@]}" 2>/dev/null)
rest=()
for p in "${all[@]}"; do
	skip=
	for c in "${corepkgs[@]}"; do [ "$p" = "$c" ] && skip=1 && break; done
	[ -z "$skip" ] && rest+=("$p")
done

# -count=1 everywhere: a second run really runs the tests (a cached "ok"
# is not a test run), and integration tests run binaries built by the
# harness, whose sources the test cache does not see.
step "go test -race (core: ${core[*]})"
"$GO" test -race -count=1 -timeout 25m "${extra[@]}" "${corepkgs[@]}" || failed+=("go test -race core")

# Allocation and memory assertions are skipped under the race detector
# (sync.Pool drops items at random there, shadow memory inflates RSS): run
# them once without it.
step "go test (allocation and memory assertions, no race detector)"
"$GO" test -count=1 -run 'DoesNotAllocate|SessionMemory' "${extra[@]}" ./router/... ./dataplane/ ./dataplane/h1/ ./dataplane/observe/... ./dataplane/udpproxy/ || failed+=("go test allocations")

# The HTTP/1.1 parser is fuzzed differentially against net/http's reader
# (ours may refuse more, never accept more); 150 000 executions per target
# (10-30 s here). A count, not a duration: Go 1.26's fuzz coordinator can
# report a bare "context deadline exceeded" at the end of a -fuzztime
# duration with no failing input (golang/go#75804, fixed in Go 1.27).
step "go test -fuzz (dataplane/h1, 150000 executions per target)"
for f in FuzzParseHead FuzzChunkedBody; do
	"$GO" test -run '^$' -fuzz "^$f\$" -fuzztime 150000x -fuzzminimizetime 5s -parallel 1 ./dataplane/h1/ || failed+=("fuzz $f")
done
step "go test -fuzz (dataplane/httpwire: chunk lines and field lines against the RFC grammar and net/http, 150000 executions per target)"
for f in FuzzChunkLine FuzzFieldLine; do
	"$GO" test -run '^$' -fuzz "^$f\$" -fuzztime 150000x -fuzzminimizetime 5s -parallel 1 ./dataplane/httpwire/ || failed+=("fuzz httpwire $f")
done

step "go test (rest, integration included; the end-to-end suites build and start the real binaries: about 10-20 min on 2 cores)"
"$GO" test -count=1 -timeout 40m "${extra[@]}" "${rest[@]}" || failed+=("go test rest")

took=$(($(date +%s) - start))
if [ ${#failed[@]} -ne 0 ]; then
	printf '\nFAIL: %s (took %ds)\n' "$(IFS=,; echo "${failed[*]}")" "$took"
	exit 1
fi
printf '\nPASS: setup, gofmt, vet, race tests on core, all other tests (took %ds)\n' "$took"

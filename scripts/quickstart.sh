#!/usr/bin/env bash
# Quickstart: builds gantry and whoami, starts two whoami backends and
# gantry with examples/quickstart/ (static gantry.yml + dynamic/), all on
# 127.0.0.1, prints a curl command that works, and runs until Ctrl-C.
#
# Ports (override when taken): WEB_PORT=8000 (proxy), API_PORT=8080 (API,
# dashboard, /ping), WHOAMI1_PORT=9001, WHOAMI2_PORT=9002.
# Nothing is written into the repository: binaries and the store live in a
# temporary directory removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
command -v go >/dev/null 2>&1 || { echo "quickstart: Go is not installed (https://go.dev/dl/)" >&2; exit 1; }

export WEB_PORT=${WEB_PORT:-8000} API_PORT=${API_PORT:-8080}
export WHOAMI1_PORT=${WHOAMI1_PORT:-9001} WHOAMI2_PORT=${WHOAMI2_PORT:-9002}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$WEB_PORT" "$API_PORT" "$WHOAMI1_PORT" "$WHOAMI2_PORT"; do
	if listening "$p"; then
		echo "quickstart: port $p on 127.0.0.1 is taken; pick others, e.g." >&2
		echo "  WEB_PORT=18000 API_PORT=18080 WHOAMI1_PORT=19001 WHOAMI2_PORT=19002 $0" >&2
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gantry-quickstart.XXXXXX")
pids=()
cleanup() {
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

echo "quickstart: building gantry and whoami (the first build downloads modules and compiles them: about 10 minutes of CPU, 5 minutes on 2 idle cores, much longer on a busy machine; later builds take seconds)..."
started=$(date +%s)
# A progress line every 15 s: "go build" is silent while it compiles.
( while sleep 15; do echo "quickstart: still building ($(($(date +%s) - started))s)..."; done ) &
ticker=$!
pids+=("$ticker")
# The flags of scripts/image.sh: its build then finds every package in Go's
# build cache and only links.
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$work/gantry" ./cmd/gantry
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/whoami" ./cmd/whoami
# Stop the ticker and forget its pid: cleanup, maybe hours later, must not
# signal whatever process has been given that pid since.
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
pids=()
echo "quickstart: built in $(($(date +%s) - started))s; starting two whoami backends and gantry"

"$work/whoami" --addr "127.0.0.1:$WHOAMI1_PORT" --name whoami-1 >"$work/whoami-1.log" 2>&1 &
pids+=($!)
"$work/whoami" --addr "127.0.0.1:$WHOAMI2_PORT" --name whoami-2 >"$work/whoami-2.log" 2>&1 &
pids+=($!)

GANTRY_ENTRYPOINTS_WEB_ADDRESS="127.0.0.1:$WEB_PORT" \
GANTRY_ENTRYPOINTS_TRAEFIK_ADDRESS="127.0.0.1:$API_PORT" \
GANTRY_STORE_PATH="$work/gantry.db" \
	"$work/gantry" --configFile=examples/quickstart/gantry.yml &
gantry=$!
pids+=("$gantry")

# Wait (at most 30 s) until the route answers through the proxy.
url="http://127.0.0.1:$WEB_PORT/"
ready=
for _ in $(seq 1 150); do
	if ! kill -0 "$gantry" 2>/dev/null; then
		echo "quickstart: gantry exited; see its log above" >&2
		exit 1
	fi
	if command -v curl >/dev/null 2>&1; then
		curl -fsS -o /dev/null -H 'Host: whoami.localhost' "$url" 2>/dev/null && ready=1 && break
	elif listening "$WEB_PORT"; then
		ready=1 && break
	fi
	sleep 0.2
done

headline="Gantry is running. Try:"
if [ -z "$ready" ]; then
	echo "quickstart: gantry is running but $url did not answer 200 within 30 s; see its log above" >&2
	headline="Gantry is running but not answering yet (see above). Once it does, try:"
fi
cat <<MSG

  $headline

    curl -H 'Host: whoami.localhost' http://127.0.0.1:$WEB_PORT/
    curl -H 'Host: whoami.localhost' http://127.0.0.1:$WEB_PORT/two/hello

  Dashboard: http://127.0.0.1:$API_PORT/dashboard/   Ping: http://127.0.0.1:$API_PORT/ping
  Edit examples/quickstart/dynamic/whoami.yml: changes apply without a restart.
  Press Ctrl-C to stop.

MSG
wait "$gantry"

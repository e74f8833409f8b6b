#!/usr/bin/env bash
# Where a proxy's CPU goes per request: the proxy (PTARGET: gantry, nginx or
# haproxy) pinned as in regime A (CPU 0, GOMAXPROCS=1 / one worker, origins on
# CPU 1, load client on LOAD_CPU), one route under load for PDUR seconds, and
# during a window inside it: perf record -g (user + kernel) and perf stat's
# syscall counts (when perf works), user/system ticks, and for Gantry Go's CPU
# profile and the allocations (api.debug pprof, on a loopback API port).
# PVARIANT (Gantry only: alog, metrics, trace1, trace001) profiles one of the
# observability variants of run.sh's OBS instead of plain Gantry.
# Usage: ROUTE=get1k PDUR=15 [PTARGET=nginx] [PVARIANT=trace1] integration/bench/profile.sh   (see README.md)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${ROUTE:=get1k}" "${PDUR:=15}" "${PTARGET:=gantry}" "${PVARIANT:=}"
: "${OUT:=$(cd "$HERE/../.." && pwd)/integration/bench/out/profile-$PTARGET${PVARIANT:+-$PVARIANT}-$ROUTE-$(date +%Y%m%d-%H%M%S)}"
REGIMES=A BENCH_LIB=1 . "$HERE/run.sh"
[ "$PDUR" -ge 8 ] || { echo "PDUR must be at least 8 (seconds)" >&2; exit 2; }
PPROF_PORT=$((BASE_PORT+20))
PPROF="http://127.0.0.1:$PPROF_PORT/debug/pprof"
WIN=$((PDUR - 4))   # the profiled window, inside the load

start_origins A
case $PVARIANT in
  '') ;;
  alog|metrics|trace1|trace001) [ "$PTARGET" = gantry ] || { echo "PVARIANT is Gantry's only" >&2; exit 2; } ;;
  *) echo "PVARIANT: one of alog metrics trace1 trace001" >&2; exit 2 ;;
esac
PPROF_PORT=$PPROF_PORT start A "$PTARGET" $PVARIANT
GPID=$START_PID
PP=$(tree "$GPID" | paste -sd, -)   # the proxy's processes (nginx: master and worker)
GO=0; [ "$PTARGET" = gantry ] && GO=1
log "$PTARGET pids $PP, route $ROUTE, profiling ${WIN}s of a ${PDUR}s load"
load A "$ROUTE" "$(port_of "$PTARGET" "$ROUTE")" "$WARMUP" "$RUN/warm.out"; wait "$LPID" || true
load A "$ROUTE" "$(port_of "$PTARGET" "$ROUTE")" "$PDUR" "$OUT/load.txt" --latency; LP=$LPID
sleep 2
[ "$GO" = 0 ] || curl -s -o "$OUT/allocs-before.pb.gz" "$PPROF/allocs"
served() { curl -s "http://127.0.0.1:$ORIGIN/origin-status" | awk 'NR==3{print $3}'; }  # requests the nginx origin served
q0=$(served); e0=$(date +%s.%N); t0=$(ticks "$GPID")
[ "$GO" = 0 ] || { curl -s -o "$OUT/cpu.pb.gz" "$PPROF/profile?seconds=$WIN" & CP=$!; }
PERF=0
if command -v perf >/dev/null; then
  perf stat -x, -e 'raw_syscalls:sys_enter' -e 'syscalls:sys_enter_read' -e 'syscalls:sys_enter_write' -e 'syscalls:sys_enter_writev' \
    -e 'syscalls:sys_enter_recvfrom' -e 'syscalls:sys_enter_sendto' -e 'syscalls:sys_enter_epoll_pwait' -e 'syscalls:sys_enter_epoll_wait' \
    -e 'syscalls:sys_enter_futex' -e 'syscalls:sys_enter_nanosleep' -e 'syscalls:sys_enter_getsockopt' -e 'context-switches' \
    -p "$PP" -o "$OUT/perf-stat.csv" -- sleep "$WIN" 2>/dev/null & SP=$!
  if perf record -q -F 499 -g -p "$PP" -o "$OUT/perf.data" -- sleep "$WIN" 2>"$OUT/perf-record.err"; then PERF=1; fi
  wait "$SP" || true
fi
[ "$GO" = 0 ] || wait "$CP" || true
t1=$(ticks "$GPID"); e1=$(date +%s.%N); q1=$(served)
[ "$GO" = 0 ] || curl -s -o "$OUT/allocs-after.pb.gz" "$PPROF/allocs"
SC=; [ -s "$OUT/perf-stat.csv" ] && SC=1
wait "$LP" || true
rate=$(awk '/^Requests\/sec:/{print $2} /^messages|^units/{print $4} /^finished in/{print $4}' "$OUT/load.txt")
# the rate inside the window: counted by the nginx origin for its routes, else the load client's average
EL=$(awk -v a="$e0" -v b="$e1" 'BEGIN{printf "%.3f", b-a}')
wrate=$(awk -v a="$q0" -v b="$q1" -v w="$EL" -v r="$rate" 'BEGIN{ if ("'"${RORIGIN[$ROUTE]}"'" == "'"$ORIGIN"'" && b > a) printf "%.1f", (b-a-1)/w; else print r }')
[ "$GO" = 0 ] || cp "$RUN/gantry" "$OUT/gantry.bin"

{
  echo "# $PTARGET${PVARIANT:+ ($PVARIANT)} profile: route $ROUTE, regime A, $(date -u), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
  echo
  echo "rate ${rate}/s over ${PDUR}s; ${wrate}/s in the ${EL}s window with the profilers attached (per-request figures use this)"
  awk -v a="${t0% *}" -v b="${t1% *}" -v c="${t0#* }" -v d="${t1#* }" -v hz="$HZ" -v w="$EL" -v r="$wrate" 'BEGIN {
    u = (b-a)/hz/w; s = (d-c)/hz/w
    printf "CPU: %.1f%% of a core (user %.1f%%, system %.1f%%) = %.1f µs per request (user %.1f, kernel %.1f)\n", 100*(u+s), 100*u, 100*s, (u+s)/r*1e6, u/r*1e6, s/r*1e6 }'
  if [ -n "$SC" ]; then
    echo; echo "## syscalls per request (perf stat over the window ÷ requests in it)"; echo
    awk -F, -v r="$wrate" -v w="$WIN" '$1 ~ /^[0-9]+$/ && $1 > 0 { printf "%-34s %8.2f\n", $3, $1 / r / w }' "$OUT/perf-stat.csv"
  fi
  if [ "$GO" = 1 ]; then
  echo; echo "## Go CPU profile (top, flat)"; echo
  go tool pprof -top -nodecount=30 "$OUT/gantry.bin" "$OUT/cpu.pb.gz" 2>/dev/null | sed -n '1,40p'
  echo; echo "## Go CPU profile (top, cumulative)"; echo
  go tool pprof -top -cum -nodecount=30 "$OUT/gantry.bin" "$OUT/cpu.pb.gz" 2>/dev/null | sed -n '6,40p'
  echo; echo "## allocations during the window (objects, sampled)"; echo
  go tool pprof -top -nodecount=25 -sample_index=alloc_objects -base "$OUT/allocs-before.pb.gz" "$OUT/gantry.bin" "$OUT/allocs-after.pb.gz" 2>/dev/null | sed -n '1,35p'
  fi
  if [ "$PERF" = 1 ]; then
    echo; echo "## perf: user vs kernel (share of samples)"; echo
    perf report -i "$OUT/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | awk 'NR<=8'
    echo; echo "## perf: top symbols, user and kernel (no children)"; echo
    perf report -i "$OUT/perf.data" --no-children --sort sym --stdio 2>/dev/null | grep -E '^ +[0-9]' | awk 'NR<=40'
  else
    echo; echo "(perf record failed: $(head -3 "$OUT/perf-record.err"))"
  fi
} > "$OUT/profile.md"
cat "$OUT/profile.md"
log "done: $OUT/profile.md"

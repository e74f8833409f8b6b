#!/usr/bin/env bash
# Side-by-side load harness: the origins alone, nginx, HAProxy, socat and
# Gantry in front of the same origins, seven routes (1 KiB GET, 4 KiB POST
# upload, 64 KiB chunked response, WebSocket echo, new TCP connections and
# one connection's throughput through a TCP router, UDP echo through a UDP
# router), Gantry's GET with access logs and tracing on, two regimes (A
# pinned, B unpinned), interleaved rounds, 127.0.0.1 only, every load
# bounded by its duration and count. See README.md.
# Usage: integration/bench/run.sh            (full run, about 25 minutes)
#        QUICK=1 integration/bench/run.sh    (one short round, about 6 minutes)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
if [ "${QUICK:-0}" = 1 ]; then
  : "${ROUNDS:=1}" "${DURATION:=4}" "${WARMUP:=1}" "${DO_TLS:=0}" "${DO_ROUTERS:=0}" "${DO_IDLE:=0}"
fi
: "${ROUNDS:=3}" "${DURATION:=5}" "${WARMUP:=1}" "${CONNS:=50}"
: "${REGIMES:=A B}"                      # A: proxy pinned to CPU 0, origins on CPU 1; B: unpinned
: "${LOAD_CPU:=0}"                       # regime A: the load generator's CPU (0: with the proxy; 1: with the origins)
: "${TARGETS:=direct nginx haproxy socat gantry}"
: "${ROUTES:=get1k post4k chunk64k ws h2 tcpconn tcpbulk udp}"
: "${H2_CONNS:=10}" "${H2_STREAMS:=10}"       # h2: h2load connections, and streams in flight on each
: "${CORES=1 2 4}"                       # proxy cores of the scaling table (empty: none); client and origins on the other CPUs
: "${OBS=alog metrics trace1 trace001}"          # Gantry variants measured on get1k, as a ratio to plain Gantry
: "${L4_MAX:=5000000}"                   # tcpconn/tcpbulk (MB)/udp: at most this many units per run (besides DURATION)
: "${DO_TLS:=1}" "${DO_ROUTERS:=1}" "${DO_IDLE:=1}"
: "${IDLE_CONNS:=10000}" "${TLS_CONC:=32}" "${WS_SIZE:=1024}"
: "${HEADROOM_MIN:=1.5}"
: "${BASE_PORT:=19080}"
: "${GANTRY_BIN:=}"                      # prebuilt Gantry to measure; default: build cmd/gantry from this tree
: "${OUT:=$ROOT/integration/bench/out/$(date +%Y%m%d-%H%M%S)}"
[ "$DURATION" -ge 4 ] || { echo "DURATION must be at least 4 (seconds)" >&2; exit 2; }
# The ports must lie outside the ephemeral range: tcpconn cycles through every ephemeral port, and a
# listener whose port an outgoing connection holds fails to bind (seen: HAProxy, EADDRINUSE).
read -r EPH_LO EPH_HI < /proc/sys/net/ipv4/ip_local_port_range
if [ "$((BASE_PORT + 43))" -ge "$EPH_LO" ] && [ "$BASE_PORT" -le "$EPH_HI" ]; then
  echo "BASE_PORT=$BASE_PORT..$((BASE_PORT + 43)) overlaps the ephemeral port range $EPH_LO-$EPH_HI: choose a BASE_PORT below $((EPH_LO - 44))" >&2; exit 2
fi

ORIGIN=$BASE_PORT            # nginx origin: /1k (and /), /upload
GORIGIN=$((BASE_PORT+5))     # Go origin (origin/): /chunk64k, /ws
TORIGIN=$((BASE_PORT+6))     # Go origin: short TCP connections (tcpconn)
UORIGIN=$((BASE_PORT+7))     # Go origin: UDP echo (udp)
OTLP=$((BASE_PORT+8))        # Go origin: OTLP/HTTP trace receiver (tracing runs)
EORIGIN=$((BASE_PORT+9))     # Go origin: TCP echo (tcpbulk)
declare -A PORT=([nginx]=$((BASE_PORT+1)) [haproxy]=$((BASE_PORT+2)) [gantry]=$((BASE_PORT+3)))
declare -A TPORT=([nginx]=$((BASE_PORT+11)) [haproxy]=$((BASE_PORT+12)) [gantry]=$((BASE_PORT+13)))
declare -A CPORT=([nginx]=$((BASE_PORT+31)) [haproxy]=$((BASE_PORT+32)) [gantry]=$((BASE_PORT+33)) [direct]=$TORIGIN)  # TCP routers
declare -A BPORT=([nginx]=$((BASE_PORT+34)) [haproxy]=$((BASE_PORT+35)) [gantry]=$((BASE_PORT+36)) [direct]=$EORIGIN) # TCP routers, bulk
declare -A UPORT=([nginx]=$((BASE_PORT+41)) [socat]=$((BASE_PORT+42)) [gantry]=$((BASE_PORT+43)) [direct]=$UORIGIN)   # UDP routers
# route -> path, the origin port that serves it, and the load client
declare -A RPATH=([get1k]=/1k [post4k]=/upload [chunk64k]=/chunk64k [ws]=/ws)
declare -A RORIGIN=([get1k]=$ORIGIN [h2]=$ORIGIN [post4k]=$ORIGIN [chunk64k]=$GORIGIN [ws]=$GORIGIN [tcpconn]=$TORIGIN [tcpbulk]=$EORIGIN [udp]=$UORIGIN)
port_of() { # target route -> the port the target serves the route on
  case $2 in h2) echo "${TPORT[$1]}";; tcpconn) echo "${CPORT[$1]}";; tcpbulk) echo "${BPORT[$1]}";; udp) echo "${UPORT[$1]}";; *) echo "${PORT[$1]}";; esac
}
serves() { # target route -> whether the target takes part in the route
  case $1:$2 in
    direct:h2) return 1 ;;     # the origin speaks cleartext HTTP/1.1 only
    direct:*|gantry:*) return 0 ;;
    nginx:tcpconn|nginx:tcpbulk|nginx:udp) [ "$NGX_STREAM" = 1 ] ;;
    haproxy:udp) return 1 ;;   # HAProxy 2.6 (community) has no UDP proxy
    socat:udp) return 0 ;;
    socat:*) return 1 ;;
    *) return 0 ;;
  esac
}
HZ=$(getconf CLK_TCK)
RUN=$(mktemp -d -t gantrybench.XXXXXX); chmod 755 "$RUN"
mkdir -p "$OUT" "$RUN/logs" "$RUN/tls" "$RUN/g"   # tls/, g/: the only directories Gantry reads (it may watch them)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true
  cp -r "$RUN/logs" "$OUT/" 2>/dev/null || true; rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '[%s] %s\n' "$(date +%T)" "$*" | tee -a "$OUT/run.log" >&2; }

# --- tools: Debian packages, only the missing ones (setup.sh) ---------------
"$HERE/setup.sh" || { echo "integration/bench/setup.sh failed" >&2; exit 1; }
NGX_STREAM_SO=/usr/lib/nginx/modules/ngx_stream_module.so   # nginx's stream module (Debian: libnginx-mod-stream)
export PATH="$PATH:/usr/sbin"
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(
  cd "$ROOT"
  if [ -z "$GANTRY_BIN" ]; then CGO_ENABLED=0 go build -o "$RUN/gantry" ./cmd/gantry; else cp "$GANTRY_BIN" "$RUN/gantry"; fi
  for c in origin wsload tlsload idleconns l4load; do CGO_ENABLED=0 go build -o "$RUN/$c" "./integration/bench/$c"; done
)
ONE_K=$(head -c 1024 /dev/zero | tr '\0' 'x')
printf 'wrk.method = "POST"\nwrk.body = string.rep("p", 4096)\nwrk.headers["Content-Type"] = "application/octet-stream"\n' > "$RUN/post4k.lua"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench.local -addext subjectAltName=DNS:bench.local \
  -keyout "$RUN/tls/rsa.key" -out "$RUN/tls/rsa.crt" 2>/dev/null
cat "$RUN/tls/rsa.crt" "$RUN/tls/rsa.key" > "$RUN/tls/rsa.pem"
{ echo "date: $(date -u)"; echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ${GANTRY_BIN:+(GANTRY_BIN=$GANTRY_BIN)}"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"; nginx -v 2>&1; haproxy -v | head -1
  wrk -v 2>&1 | head -1; "$RUN/gantry" version 2>&1 | head -1; go version
  socat -V 2>&1 | grep -m1 'socat version'
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
  echo "knobs: ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP CONNS=$CONNS REGIMES=$REGIMES LOAD_CPU=$LOAD_CPU ROUTES=$ROUTES WS_SIZE=$WS_SIZE OBS=$OBS L4_MAX=$L4_MAX H2_CONNS=$H2_CONNS H2_STREAMS=$H2_STREAMS CORES=$CORES"; } > "$OUT/versions.txt" || true
NGX_STREAM=0; [ -f "$NGX_STREAM_SO" ] && NGX_STREAM=1

# --- configs: conf.sh ---------------------------------------------------
. "$HERE/conf.sh"

# --- processes ----------------------------------------------------------
# Regimes: A (proxy on CPU 0, origins on 1), B (unpinned), C<n> (CORES: proxy on CPUs 0..n-1, the
# origins and the load client on the others). Role 0 is the proxy, 1 the origins and load side.
pin() {
  case "$1" in
    A) echo "taskset -c $2" ;;
    C*) if [ "$2" = 0 ]; then echo "taskset -c 0-$((${1#C} - 1))"; else echo "taskset -c ${1#C}-$(($(nproc) - 1))"; fi ;;
    *) echo "" ;;
  esac
}
gomax() { case "$1" in A) echo "env GOMAXPROCS=1";; *) echo "";; esac; }   # C<n>: Go sizes itself to its CPU set
workers() { case "$1" in A) echo 1;; C*) echo "${1#C}";; *) echo "${2:-auto}";; esac; }   # nginx workers, HAProxy threads
loadcpu() { case "$1" in C*) echo 1;; *) echo "$LOAD_CPU";; esac; }
wthreads() { case "$1" in C*) echo $(($(nproc) - ${1#C}));; *) echo 1;; esac; }   # wrk/h2load threads
START_PID=
busy() { # port -> true when something already listens there (another engineer's run on the same BASE_PORT)
  local p
  for p in "$@"; do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0; done
  return 1
}
start() { # regime target [variant] -> START_PID
  local r=$1 t=$2 v=${3:-} c
  if [ "$t" != direct ] && busy ${PORT[$t]:-} ${TPORT[$t]:-} ${CPORT[$t]:-} ${BPORT[$t]:-}; then
    log "WARNING: a port of $t (${PORT[$t]:-} ${TPORT[$t]:-} ${CPORT[$t]:-} ${BPORT[$t]:-}) already answers before $t is started: another process uses BASE_PORT=$BASE_PORT; skipped"
    return 1
  fi
  case $t in
    nginx) c=$(nginx_conf nginx "${PORT[nginx]}" "$(workers "$r")" "${TPORT[nginx]}")
           $(pin "$r" 0) nginx -c "$c" -e "$RUN/logs/nginx.log" & ;;
    haproxy) c=$(haproxy_conf "$(workers "$r" 2)"); $(pin "$r" 0) haproxy -f "$c" > "$RUN/logs/haproxy.log" 2>&1 & ;;
    gantry)
      case $v in
        many) dyn_many; c=$(gantry_conf dyn-many.yml rsa) ;;
        alog|metrics|trace1|trace001) dyn_one; c=$(gantry_conf dyn-one.yml rsa "$v") ;;
        *) dyn_one; c=$(gantry_conf dyn-one.yml "${v:-rsa}") ;;
      esac
      $(gomax "$r") $(pin "$r" 0) "$RUN/gantry" --configFile="$c" > "$RUN/logs/gantry.log" 2>&1 & ;;
    socat) # UDP only: a forked child per client address (its session), idle timeout 10 s
      $(pin "$r" 0) socat -T 10 "UDP4-LISTEN:${UPORT[socat]},bind=127.0.0.1,fork,reuseaddr" "UDP4:127.0.0.1:$UORIGIN" > "$RUN/logs/socat.log" 2>&1 & ;;
    direct) START_PID=; return 0 ;;
  esac
  START_PID=$!; PIDS+=("$START_PID")
  if [ "$t" = socat ]; then
    for _ in $(seq 50); do "$RUN/l4load" -mode udp -addr "127.0.0.1:${UPORT[socat]}" -probe 2>/dev/null && return 0; sleep 0.1; done
    log "socat did not echo"; return 1
  fi
  for _ in $(seq 100); do
    kill -0 "$START_PID" 2>/dev/null || break
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: bench.local' "http://127.0.0.1:${PORT[$t]}/1k")" = 200 ] && kill -0 "$START_PID" 2>/dev/null && return 0
    sleep 0.1
  done
  log "$t did not answer 200; log:"; tail -20 "$RUN/logs/$t.log" >&2 || true; return 1
}
start_origins() { # regime -> OPID (nginx origin), GOPID (Go origin); both on CPU 1 in regime A
  local r=$1 oc
  if busy "$ORIGIN" "$GORIGIN" "$TORIGIN" "$OTLP" "$EORIGIN"; then log "a port in $BASE_PORT..$((BASE_PORT+9)) is already in use: another run? set BASE_PORT"; exit 1; fi
  oc=$(nginx_conf origin "$ORIGIN" "$([ "$r" = A ] && echo 1 || echo auto)")
  $(pin "$r" 1) nginx -c "$oc" -e "$RUN/logs/origin.log" & OPID=$!; PIDS+=("$OPID")
  $(gomax "$r") $(pin "$r" 1) "$RUN/origin" -addr "127.0.0.1:$GORIGIN" -tcp "127.0.0.1:$TORIGIN" -echo "127.0.0.1:$EORIGIN" -udp "127.0.0.1:$UORIGIN" -otlp "127.0.0.1:$OTLP" \
    2> "$RUN/logs/gorigin.log" & GOPID=$!; PIDS+=("$GOPID")
  for _ in $(seq 50); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ORIGIN/1k")$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GORIGIN/1k")" = 200200 ] &&
      "$RUN/l4load" -mode tcpconn -addr "127.0.0.1:$TORIGIN" -probe 2>/dev/null && "$RUN/l4load" -mode udp -addr "127.0.0.1:$UORIGIN" -probe 2>/dev/null && return 0
    sleep 0.1
  done
  log "origins did not come up"; exit 1
}
stop() { # pid [tree]: with "tree", its children too (socat's forked sessions)
  [ -n "${1:-}" ] || return 0
  local k=
  [ "${2:-}" = tree ] && k=$(tree "$1" | tail -n +2)
  kill "$1" $k 2>/dev/null || true; wait "$1" 2>/dev/null || true; sleep 0.3
}
tree() { # pids... -> them and their children (nginx/HAProxy workers), without forking
  local p k
  for p in "$@"; do
    echo "$p"
    k=; read -r k 2>/dev/null < "/proc/$p/task/$p/children" || true
    [ -z "$k" ] || printf '%s\n' $k
  done
}
rss() { [ -n "${1:-}" ] || { echo 0; return; }; local s=0 p v; for p in $(tree "$1"); do v=$(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0); s=$((s+${v:-0})); done; echo $s; }
ticks() { # pids... -> "user system" clock ticks summed over their process trees (bash builtins only:
  # this runs inside the measured window on a busy machine, so it must be quick)
  local u=0 s=0 p line f
  for p in $(tree "$@"); do
    line=; read -r line 2>/dev/null < "/proc/$p/stat" || continue
    read -ra f <<< "${line##*) }"   # after "pid (comm) ": f[11] utime, f[12] stime
    u=$((u+${f[11]:-0})); s=$((s+${f[12]:-0}))
  done
  echo "$u $s"
}
pct() { awk -v a="$1" -v b="$2" -v hz="$HZ" -v el="$3" 'BEGIN{printf "%.1f", (b-a)/hz/el*100}'; }
ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }

load() { # regime route port seconds outfile [latency] -> starts the load client in the background, LPID
  local r=$1 route=$2 port=$3 d=$4 out=$5 lat=${6:-} w
  w=$(pin "$r" "$(loadcpu "$r")")
  case $route in
    h2) $w h2load -t"$(wthreads "$r")" -c"$H2_CONNS" -m"$H2_STREAMS" -D"$d" --connect-to="127.0.0.1:$port" \
          "https://bench.local:$port${RPATH[get1k]}" > "$out" 2>&1 & ;;
    ws) $(gomax "$r") $w "$RUN/wsload" -addr "127.0.0.1:$port" -path /ws -c "$CONNS" -size "$WS_SIZE" -d "${d}s" > "$out" 2>&1 & ;;
    tcpconn|udp) $(gomax "$r") $w "$RUN/l4load" -mode "$route" -addr "127.0.0.1:$port" -c "$CONNS" -d "${d}s" -n "$L4_MAX" > "$out" 2>&1 & ;;
    tcpbulk) $(gomax "$r") $w "$RUN/l4load" -mode tcpbulk -addr "127.0.0.1:$port" -c 1 -d "${d}s" -n "$L4_MAX" > "$out" 2>&1 & ;;
    post4k) $w wrk -t"$(wthreads "$r")" -c"$CONNS" -d"${d}s" $lat -s "$RUN/post4k.lua" -H 'Host: bench.local' "http://127.0.0.1:$port${RPATH[$route]}" > "$out" 2>&1 & ;;
    *) $w wrk -t"$(wthreads "$r")" -c"$CONNS" -d"${d}s" $lat -H 'Host: bench.local' "http://127.0.0.1:$port${RPATH[$route]}" > "$out" 2>&1 & ;;
  esac
  LPID=$!
}

measure() { # route regime round target pid port [label] -> appends a CSV row
  local route=$1 r=$2 round=$3 t=$4 pid=$5 port=$6 label=${7:-$4} ri rl out raw
  ri=$(rss "$pid")
  load "$r" "$route" "$port" "$WARMUP" "$RUN/warm.out"; wait "$LPID" || true
  out="$RUN/load.out"
  load "$r" "$route" "$port" "$DURATION" "$out" --latency; local lp=$LPID
  sleep 1
  local p0 o0 l0 p1 o1 l1 t0 t1 el
  t0=$(date +%s.%N); p0=$(ticks "$pid"); o0=$(ticks "$OPID" "$GOPID"); l0=$(ticks "$lp")
  sleep $((DURATION - 2))
  t1=$(date +%s.%N); p1=$(ticks "$pid"); o1=$(ticks "$OPID" "$GOPID"); l1=$(ticks "$lp")
  local late=0; kill -0 "$lp" 2>/dev/null || late=1   # the window must end inside the load
  rl=$(rss "$pid")
  wait "$lp" || true
  raw="$OUT/raw/$route-$r-$round-$label.txt"; mkdir -p "$OUT/raw"; cp "$out" "$raw"
  local rps p50 p99 errs sent= lost= foreign=
  if [ "$route" = ws ]; then
    read -r rps p50 p99 errs < <(awk '/^messages/{print $4, $6, $8, $10}' "$out")
  elif [ "$route" = h2 ]; then # h2load prints no percentiles: p50/p99 stay empty
    rps=$(awk '/^finished in/{print $4}' "$out")
    errs=$(awk '/^requests:/{n+=$10+$12+$14} /^status codes:/{n+=$5+$7+$9} END{print n+0}' "$out")
  elif [ "$route" = tcpconn ] || [ "$route" = tcpbulk ] || [ "$route" = udp ]; then
    read -r rps p50 p99 errs sent lost foreign < <(awk '/^units/{print $4, $6, $8, $10, $12, $14, $16}' "$out")
  else
    rps=$(awk '/^Requests\/sec:/{print $2}' "$out")
    p50=$(ms "$(awk '$1=="50%"{print $2}' "$out")"); p99=$(ms "$(awk '$1=="99%"{print $2}' "$out")")
    errs=$(awk '/Non-2xx/{n+=$NF} /Socket errors/{gsub(",",""); n+=$4+$6+$8+$10} END{print n+0}' "$out")
  fi
  el=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  local pu ps cpu ocpu lcpu
  pu=$(pct "${p0% *}" "${p1% *}" "$el"); ps=$(pct "${p0#* }" "${p1#* }" "$el")
  cpu=$(awk -v a="$pu" -v b="$ps" 'BEGIN{printf "%.1f", a+b}')
  ocpu=$(pct $(( ${o0% *} + ${o0#* } )) $(( ${o1% *} + ${o1#* } )) "$el")
  lcpu=$(pct $(( ${l0% *} + ${l0#* } )) $(( ${l1% *} + ${l1#* } )) "$el")
  if [ "$late" = 1 ]; then log "WARNING: $route $r #$round $label: the CPU window outlasted the load (machine too busy); row counted as an error"; errs=$((${errs:-0}+1)); fi
  echo "$route,$r,$round,$label,${rps:-0},${p50:-},${p99:-},$ri,$rl,$cpu,$pu,$ps,$ocpu,$lcpu,${errs:-0},$sent,$lost,$foreign" >> "$OUT/runs.csv"
  log "$route $r #$round $label: rate=${rps:-0}/s p50=${p50:-}ms p99=${p99:-}ms proxy cpu=${cpu}% (usr $pu sys $ps) origins=${ocpu}% load=${lcpu}% rss=${ri}/${rl}KiB errors=${errs:-0}${lost:+ lost=$lost/$sent}${foreign:+ foreign=$foreign}"
}
obs_check() { # regime round variant spans-before -> what the variant wrote, in sanity.txt
  local r=$1 round=$2 v=$3 s0=$4 n s1
  n=$(awk '/requests in/{n+=$1} END{print n+0}' "$RUN/warm.out" "$RUN/load.out")
  case $v in
    alog) echo "gantry-alog-$r #$round: $(wc -l < "$RUN/logs/access.log") JSON access-log lines for $n requests (warm-up included)" >> "$OUT/sanity.txt"
          rm -f "$RUN/logs/access.log" ;;
    trace*) s1=$(curl -s "http://127.0.0.1:$OTLP/spans")
            echo "gantry-$v-$r #$round: $((s1 - s0)) spans received by the OTLP receiver for $n requests (warm-up included; 3 spans per sampled request)" >> "$OUT/sanity.txt" ;;
  esac
}
l4sanity() { # target -> one unit of each layer-4 route it serves, in sanity.txt
  local t=$1 x=
  for route in tcpconn tcpbulk udp; do
    [[ " $ROUTES " == *" $route "* ]] && serves "$t" "$route" || continue
    if "$RUN/l4load" -mode "$route" -addr "127.0.0.1:$(port_of "$t" "$route")" -probe 2>>"$OUT/sanity.txt"; then x+=" $route ok"; else x+=" $route FAILED"; fi
  done
  echo "${x# }"
}
sanity() { # label target -> checks every route once, logs to sanity.txt
  local t=$1 port=${PORT[$2]:-} a b c h l4
  l4=$(l4sanity "$2")
  if [ -z "$port" ]; then # socat: UDP only
    [ -n "$l4" ] || return 0
    echo "$t: $l4 (want ok)" >> "$OUT/sanity.txt"
    [[ "$l4" != *FAILED* ]] || log "WARNING: $t answers wrongly: $(tail -1 "$OUT/sanity.txt")"
    return 0
  fi
  a=$(curl -s -o /dev/null -w '%{http_code}/%{size_download}' -H 'Host: bench.local' "http://127.0.0.1:$port/1k")
  b=$(curl -s -w '/%{http_code}' -H 'Host: bench.local' --data-binary "@$RUN/post4k.lua" "http://127.0.0.1:$port/upload" | tr -d '\n')
  c=$(curl -s -o /dev/null -w '%{http_code}/%{size_download}' -H 'Host: bench.local' "http://127.0.0.1:$port/chunk64k")
  h=$(curl -sk --http2 --resolve "bench.local:${TPORT[$2]}:127.0.0.1" -o /dev/null -w '%{http_version}/%{http_code}/%{size_download}' "https://bench.local:${TPORT[$2]}/1k")
  echo "$t: /1k $a (want 200/1024), /upload $b (want ok/200), /chunk64k $c (want 200/65536), HTTP/2 over TLS /1k $h (want 2/200/1024)${l4:+, $l4 (want ok)}" >> "$OUT/sanity.txt"
  [ "$a $b $c $h" = "200/1024 ok/200 200/65536 2/200/1024" ] && [[ "$l4" != *FAILED* ]] || log "WARNING: $t answers wrongly: $(tail -1 "$OUT/sanity.txt")"
}
measure_tls() { # regime target pid port variant(rsa|ecdsa) proto(tls12|tls13)
  local r=$1 t=$2 pid=$3 port=$4 v=$5 proto=$6 w t0 t1 p0 p1 out rps el pu ps
  w="$(pin "$r" "$(loadcpu "$r")") env GOMAXPROCS=$([ "${r#C}" != "$r" ] && echo $(($(nproc) - ${r#C})) || echo 1)"; out="$RUN/tls.out"
  $w "$RUN/tlsload" -addr "127.0.0.1:$port" -c "$TLS_CONC" -d "${WARMUP}s" $([ "$proto" = tls12 ] && echo -tls12) >/dev/null 2>&1 || true
  $w "$RUN/tlsload" -addr "127.0.0.1:$port" -c "$TLS_CONC" -d "${DURATION}s" $([ "$proto" = tls12 ] && echo -tls12) > "$out" 2>&1 &
  local wp=$!
  sleep 1; t0=$(date +%s.%N); p0=$(ticks "$pid"); sleep $((DURATION - 2)); t1=$(date +%s.%N); p1=$(ticks "$pid")
  wait $wp || true
  rps=$(awk '{print $4}' "$out"); rps=${rps:-0}
  el=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
  pu=$(pct "${p0% *}" "${p1% *}" "$el"); ps=$(pct "${p0#* }" "${p1#* }" "$el")
  echo "tls-$proto,$r,1,$t-$v,$rps,,,,,$(awk -v a="$pu" -v b="$ps" 'BEGIN{printf "%.1f", a+b}'),$pu,$ps,,,$(awk '{print $6}' "$out")" >> "$OUT/runs.csv"
  log "tls $proto $r $t-$v: handshakes/s=$rps cpu usr=$pu% sys=$ps% ($(cat "$out"))"
}

# profile.sh sources this file for the setup and the functions above
if [ "${BENCH_LIB:-0}" = 1 ]; then return 0; fi

# The measurements, in one function: bash has read all of it before it runs,
# so editing this file during a run cannot break the run.
main() {
  echo "kind,regime,round,target,rps,p50_ms,p99_ms,rss_idle_kb,rss_load_kb,cpu_pct,usr_pct,sys_pct,origin_cpu_pct,load_cpu_pct,errors,sent,lost,foreign" > "$OUT/runs.csv"
  log "output in $OUT"
  for r in $REGIMES; do
    start_origins "$r"
    for round in $(seq "$ROUNDS"); do
      for t in $TARGETS; do
        start "$r" "$t" || continue; p=$START_PID
        if [ "$t" = direct ]; then
          for route in $ROUTES; do
            serves direct "$route" || continue
            [ "${RORIGIN[$route]}" = "$ORIGIN" ] && op=$OPID || op=$GOPID
            measure "$route" "$r" "$round" direct "$op" "${RORIGIN[$route]}"
          done
          continue
        fi
        [ "$round" = 1 ] && sanity "$t-$r" "$t"
        for route in $ROUTES; do serves "$t" "$route" && measure "$route" "$r" "$round" "$t" "$p" "$(port_of "$t" "$route")"; done
        stop "$p" "$([ "$t" = socat ] && echo tree)"
      done
      for v in $OBS; do # issue 17: Gantry with access logs / tracing, get1k, interleaved with the plain runs
        s0=$(curl -s "http://127.0.0.1:$OTLP/spans")
        start "$r" gantry "$v" || continue; p=$START_PID
        measure get1k "$r" "$round" gantry "$p" "${PORT[gantry]}" "gantry-$v"
        stop "$p"; sleep 0.5   # the exporter flushes on shutdown
        obs_check "$r" "$round" "$v" "$s0"
      done
    done
    if [ "$DO_ROUTERS" = 1 ]; then
      start "$r" gantry many && { p=$START_PID; measure get1k "$r" 1 gantry "$p" "${PORT[gantry]}" gantry-10k; stop "$p"; }
    fi
    if [ "$DO_TLS" = 1 ] && [ "$r" = A ]; then
      for t in nginx haproxy gantry; do
        for proto in tls12 tls13; do
          start "$r" "$t" rsa || continue; p=$START_PID; measure_tls "$r" "$t" "$p" "${TPORT[$t]}" rsa "$proto"; stop "$p"
        done
      done
      for proto in tls12 tls13; do
        start "$r" gantry ecdsa && { p=$START_PID; measure_tls "$r" gantry "$p" "${TPORT[gantry]}" ecdsa "$proto"; stop "$p"; }
      done
    fi
    stop "$OPID"; stop "$GOPID"
  done

  for n in $CORES; do # the sizing-guide table: proxy on n cores, the load client and origins on the others
    if [ $((n + 1)) -gt "$(nproc)" ]; then
      echo "cores-skipped,C$n,1,$n,,,,,,,,,,,$(nproc)" >> "$OUT/runs.csv"
      log "CORES=$n: not measured: $n proxy cores need at least $((n + 1)) CPUs (the load client and origins on the others); this machine has $(nproc)"
      continue
    fi
    start_origins "C$n"
    for t in nginx haproxy gantry; do
      start "C$n" "$t" || continue; p=$START_PID
      measure get1k "C$n" 1 "$t" "$p" "${PORT[$t]}"
      measure_tls "C$n" "$t" "$p" "${TPORT[$t]}" rsa tls13
      stop "$p"
    done
    stop "$OPID"; stop "$GOPID"
  done

  if [ "$DO_IDLE" = 1 ]; then
    start_origins A
    for t in nginx gantry; do
      start A "$t" || continue; p=$START_PID; ri=$(rss "$p")
      "$RUN/idleconns" -addr "127.0.0.1:${PORT[$t]}" -n "$IDLE_CONNS" -hold 15s > "$RUN/idle.out" 2>&1 & ip=$!
      for _ in $(seq 200); do grep -q '^open' "$RUN/idle.out" && break; sleep 0.2; done
      sleep 2; rl=$(rss "$p"); wait $ip || true
      echo "idle,A,1,$t,,,,$ri,$rl,,,,,,$(awk '{print $2}' "$RUN/idle.out")" >> "$OUT/runs.csv"
      log "idle $t: $(cat "$RUN/idle.out"); RSS ${ri} -> ${rl} KiB; $(( (rl - ri) * 1024 / IDLE_CONNS )) bytes/conn"
      stop "$p"
    done
    stop "$OPID"; stop "$GOPID"
  fi
  cp "$OUT/versions.txt" "$OUT/summary.md"
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)" >> "$OUT/summary.md"
  if awk -v n="$(nproc)" '{exit !($1 > n)}' /proc/loadavg; then
    echo "**WARNING: the machine was busy (load average above its $(nproc) CPUs): other work shared the cores, so absolute figures are noisy and even ratios from this run are rough**" >> "$OUT/summary.md"
  fi
  python3 "$HERE/summarize.py" "$OUT/runs.csv" "$IDLE_CONNS" "$HEADROOM_MIN" >> "$OUT/summary.md"
  sed -n '/^## Table for a note/,/^## TLS\|^## [0-9]* idle/p' "$OUT/summary.md" | sed '/^## TLS\|^## [0-9]* idle/d' > "$OUT/note-table.md"
  cat "$OUT/summary.md"
  { grep '^\*\*WARNING' "$OUT/summary.md" || true; } | tr -d '*' | while read -r w; do log "$w"; done
  log "done: $OUT/summary.md"
}
main
exit

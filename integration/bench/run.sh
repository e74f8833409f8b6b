#!/usr/bin/env bash
# Side-by-side load harness: the origin alone, nginx, HAProxy and Gantry in
# front of one nginx origin serving a 1 KB file, measured with wrk on
# 127.0.0.1 only, interleaved, ROUNDS rounds, every run bounded by wrk -d.
# See README.md. Usage: integration/bench/run.sh   (knobs: env vars below)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
: "${ROUNDS:=3}" "${DURATION:=10}" "${WARMUP:=3}" "${CONNS:=50}"
: "${REGIMES:=A B}"                      # A: proxy pinned to CPU 0, wrk+origin on CPU 1; B: unpinned
: "${TARGETS:=direct nginx haproxy gantry}"
: "${DO_TLS:=1}" "${DO_ROUTERS:=1}" "${DO_IDLE:=1}"
: "${IDLE_CONNS:=10000}" "${TLS_CONC:=32}"
: "${BASE_PORT:=19080}"
: "${OUT:=$ROOT/integration/bench/out/$(date +%Y%m%d-%H%M%S)}"

ORIGIN=$BASE_PORT
declare -A PORT=([direct]=$BASE_PORT [nginx]=$((BASE_PORT+1)) [haproxy]=$((BASE_PORT+2)) [gantry]=$((BASE_PORT+3)))
declare -A TPORT=([nginx]=$((BASE_PORT+11)) [haproxy]=$((BASE_PORT+12)) [gantry]=$((BASE_PORT+13)))
HZ=$(getconf CLK_TCK)
RUN=$(mktemp -d -t gantrybench.XXXXXX); chmod 755 "$RUN"
mkdir -p "$OUT" "$RUN/www" "$RUN/logs"
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$RUN"; }
trap cleanup EXIT
log() { printf '[%s] %s\n' "$(date +%T)" "$*" | tee -a "$OUT/run.log" >&2; }

# --- tools --------------------------------------------------------------
need=()
for t in nginx:nginx haproxy:haproxy wrk:wrk openssl:openssl curl:curl taskset:util-linux python3:python3; do
  command -v "${t%%:*}" >/dev/null || [ -x "/usr/sbin/${t%%:*}" ] || need+=("${t#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"; apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
( cd "$ROOT" && CGO_ENABLED=0 go build -o "$RUN/gantry" ./cmd/gantry && go build -o "$RUN/tlsload" ./integration/bench/tlsload && go build -o "$RUN/idleconns" ./integration/bench/idleconns )
head -c 1024 /dev/zero | tr '\0' 'x' > "$RUN/www/index.html"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench.local -addext subjectAltName=DNS:bench.local \
  -keyout "$RUN/rsa.key" -out "$RUN/rsa.crt" 2>/dev/null
cat "$RUN/rsa.crt" "$RUN/rsa.key" > "$RUN/rsa.pem"
{ echo "date: $(date -u)"; echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"; nginx -v 2>&1; haproxy -v | head -1; wrk -v 2>&1 | head -1; "$RUN/gantry" version 2>&1 | head -1; go version; } > "$OUT/versions.txt" || true

# --- configs ------------------------------------------------------------
nginx_conf() { # name port workers [tlsport] -> config path; origin when name=origin
  local name=$1 port=$2 workers=$3 tport=${4:-} body
  if [ "$name" = origin ]; then
    body="server { listen 127.0.0.1:$port backlog=4096; root $RUN/www; location / { } }"
  else
    body="upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; keepalive_requests 1000000; }
    server { listen 127.0.0.1:$port default_server backlog=4096; ${tport:+listen 127.0.0.1:$tport ssl default_server backlog=4096;} server_name _; return 404; }
    server { listen 127.0.0.1:$port; ${tport:+listen 127.0.0.1:$tport ssl;} server_name bench.local;
      location / { proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
  fi
  cat > "$RUN/$name.conf" <<NGX
worker_processes $workers; worker_rlimit_nofile 65536; daemon off; pid $RUN/$name.pid; error_log $RUN/logs/$name.log warn;
events { worker_connections 30000; }
http { access_log off; default_type text/html; sendfile on; tcp_nodelay on; keepalive_requests 1000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/$name-tmp; proxy_temp_path $RUN/$name-tmp;
  ssl_certificate $RUN/rsa.crt; ssl_certificate_key $RUN/rsa.key; ssl_protocols TLSv1.2 TLSv1.3;
  ssl_ciphers ECDHE-RSA-AES256-GCM-SHA384; ssl_session_cache off; ssl_session_tickets off;
  $body }
NGX
  mkdir -p "$RUN/$name-tmp"; echo "$RUN/$name.conf"
}
haproxy_conf() { # threads
  cat > "$RUN/haproxy.cfg" <<HAP
global
    nbthread $1
    maxconn 9000
    tune.ssl.cachesize 0
    ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets
    ssl-default-bind-ciphers ECDHE-RSA-AES256-GCM-SHA384
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    option http-keep-alive
frontend fe
    bind 127.0.0.1:${PORT[haproxy]} backlog 4096
    bind 127.0.0.1:${TPORT[haproxy]} ssl crt $RUN/rsa.pem backlog 4096
    http-request return status 404 unless { req.hdr(host),lower,word(1,:) -m str bench.local }
    default_backend be
backend be
    server origin 127.0.0.1:$ORIGIN
HAP
  echo "$RUN/haproxy.cfg"
}
gantry_conf() { # dynamic-file-name cert(rsa|ecdsa)
  local dyn=$1 cert=$2
  cat > "$RUN/gantry.yml" <<GY
entryPoints:
  web: {address: "127.0.0.1:${PORT[gantry]}"}
  websecure: {address: "127.0.0.1:${TPORT[gantry]}"}
providers:
  file: {filename: "$RUN/$dyn", watch: false}
log: {level: ERROR}
store: {path: "$RUN/gantry-$RANDOM.db"}
GY
  if [ "$cert" = rsa ]; then
    printf 'tls:\n  certificates:\n    - {certFile: "%s", keyFile: "%s"}\n' "$RUN/rsa.crt" "$RUN/rsa.key" > "$RUN/tls.yml"
  else : > "$RUN/tls.yml"; fi
  cat "$RUN/tls.yml" >> "$RUN/$dyn"
  echo "$RUN/gantry.yml"
}
dyn_one() {
  cat > "$RUN/dyn-one.yml" <<DY
http:
  routers:
    bench: {rule: "Host(\`bench.local\`)", service: origin, entryPoints: [web]}
    bench-tls: {rule: "Host(\`bench.local\`)", service: origin, entryPoints: [websecure], tls: {}}
  services:
    origin: {loadBalancer: {servers: [{url: "http://127.0.0.1:$ORIGIN"}]}}
DY
}
dyn_many() { # 10 000 routers: 2 500 hosts x (host, /api, /static, exact /admin) + bench.local
  { echo "http:"; echo "  routers:"
    echo "    bench: {rule: \"Host(\`bench.local\`)\", service: origin, entryPoints: [web]}"
    for i in $(seq 0 2499); do
      h="h$i.example.com"
      echo "    r$i: {rule: \"Host(\`$h\`)\", service: origin}"
      echo "    r$i-api: {rule: \"Host(\`$h\`) && PathPrefix(\`/api\`)\", service: origin}"
      echo "    r$i-static: {rule: \"Host(\`$h\`) && PathPrefix(\`/static\`)\", service: origin}"
      echo "    r$i-admin: {rule: \"Host(\`$h\`) && Path(\`/admin\`)\", service: origin}"
    done
    echo "  services:"; echo "    origin: {loadBalancer: {servers: [{url: \"http://127.0.0.1:$ORIGIN\"}]}}"
  } > "$RUN/dyn-many.yml"
}

# --- processes ----------------------------------------------------------
pin() { case "$1" in A) echo "taskset -c $2";; *) echo "";; esac; }
START_PID=
start() { # regime target [variant]
  local r=$1 t=$2 v=${3:-} c
  case $t in
    nginx) c=$(nginx_conf nginx "${PORT[nginx]}" "$([ "$r" = A ] && echo 1 || echo auto)" "${TPORT[nginx]}")
           $(pin "$r" 0) nginx -c "$c" -e "$RUN/logs/nginx.log" & ;;
    haproxy) c=$(haproxy_conf "$([ "$r" = A ] && echo 1 || echo 2)"); $(pin "$r" 0) haproxy -f "$c" & ;;
    gantry)
      if [ "$v" = many ]; then dyn_many; c=$(gantry_conf dyn-many.yml rsa)
      else dyn_one; c=$(gantry_conf dyn-one.yml "${v:-rsa}"); fi
      if [ "$r" = A ]; then GOMAXPROCS=1 taskset -c 0 "$RUN/gantry" --configFile="$c" > "$RUN/logs/gantry.log" 2>&1 &
      else "$RUN/gantry" --configFile="$c" > "$RUN/logs/gantry.log" 2>&1 & fi ;;
    direct) START_PID=; return 0 ;;
  esac
  START_PID=$!; PIDS+=("$START_PID")
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: bench.local' "http://127.0.0.1:${PORT[$t]}/")" = 200 ] && return 0
    sleep 0.1
  done
  log "$t did not answer 200; log:"; tail -20 "$RUN/logs/$t.log" >&2 || true; return 1
}
stop() { [ -n "${1:-}" ] || return 0; kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; sleep 0.3; }
tree() { echo "$1"; ps -o pid= --ppid "$1" 2>/dev/null || true; }
rss() { [ -n "${1:-}" ] || { echo 0; return; }; local s=0 p v; for p in $(tree "$1"); do v=$(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0); s=$((s+${v:-0})); done; echo $s; }
ticks() { [ -n "${1:-}" ] || { echo 0; return; }; local s=0 p v; for p in $(tree "$1"); do v=$(awk '{sub(/.*\) /,""); print $12+$13}' "/proc/$p/stat" 2>/dev/null || echo 0); s=$((s+${v:-0})); done; echo $s; }
ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }

measure() { # kind regime target pid port variant -> appends a CSV row
  local kind=$1 r=$2 t=$3 pid=$4 port=$5 v=${6:-} w ri rl t0 t1 out
  w=$(pin "$r" 1)
  ri=$(rss "$pid")
  $w wrk -t1 -c"$CONNS" -d"${WARMUP}s" -H 'Host: bench.local' "http://127.0.0.1:$port/" >/dev/null 2>&1 || true
  out="$RUN/wrk.out"
  $w wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -H 'Host: bench.local' "http://127.0.0.1:$port/" > "$out" 2>&1 &
  local wp=$!
  sleep 1; t0=$(ticks "$pid"); sleep $((DURATION - 2)); t1=$(ticks "$pid"); rl=$(rss "$pid")
  wait $wp || true
  cp "$out" "$OUT/raw-$kind-$r-$t$v-$(date +%s%N).txt"
  local rps p50 p99 cpu non2xx
  rps=$(awk '/^Requests\/sec:/{print $2}' "$out")
  p50=$(ms "$(awk '$1=="50%"{print $2}' "$out")"); p99=$(ms "$(awk '$1=="99%"{print $2}' "$out")")
  non2xx=$(awk '/Non-2xx/{print $NF}' "$out"); non2xx=${non2xx:-0}
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v d="$((DURATION - 2))" 'BEGIN{printf "%.1f", (b-a)/hz/d*100}')
  echo "$kind,$r,$t$v,$rps,$p50,$p99,$ri,$rl,$cpu,$non2xx" >> "$OUT/runs.csv"
  log "$kind $r $t$v: rps=$rps p50=${p50}ms p99=${p99}ms rss=${ri}/${rl}KiB cpu=${cpu}% non2xx=$non2xx"
}
measure_tls() { # regime target pid port variant(rsa|ecdsa) proto(tls12|tls13)
  local r=$1 t=$2 pid=$3 port=$4 v=$5 proto=$6 w t0 t1 out rps cpu
  w=$(pin "$r" 1)
  $w env GOMAXPROCS=1 "$RUN/tlsload" -addr "127.0.0.1:$port" -c "$TLS_CONC" -d 2s $([ "$proto" = tls12 ] && echo -tls12) >/dev/null 2>&1 || true
  $w env GOMAXPROCS=1 "$RUN/tlsload" -addr "127.0.0.1:$port" -c "$TLS_CONC" -d "${DURATION}s" $([ "$proto" = tls12 ] && echo -tls12) > "$RUN/tls.out" 2>&1 &
  local wp=$!
  sleep 1; t0=$(ticks "$pid"); sleep $((DURATION - 2)); t1=$(ticks "$pid")
  wait $wp || true
  rps=$(awk '{print $4}' "$RUN/tls.out"); rps=${rps:-0}
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v d="$((DURATION - 2))" 'BEGIN{printf "%.1f", (b-a)/hz/d*100}')
  echo "tls-$proto,$r,$t-$v,$rps,,,,,$cpu,$(awk '{print $6}' "$RUN/tls.out")" >> "$OUT/runs.csv"
  log "tls $proto $r $t-$v: handshakes/s=$rps cpu=${cpu}% ($(cat "$RUN/tls.out"))"
}

echo "kind,regime,target,rps,p50_ms,p99_ms,rss_idle_kb,rss_load_kb,cpu_pct,errors" > "$OUT/runs.csv"
for r in $REGIMES; do
  # the origin: on CPU 1 with one worker in regime A, unpinned with auto workers in B
  oc=$(nginx_conf origin "$ORIGIN" "$([ "$r" = A ] && echo 1 || echo auto)")
  $(pin "$r" 1) nginx -c "$oc" -e "$RUN/logs/origin.log" & OPID=$!; PIDS+=("$OPID"); sleep 0.5
  for round in $(seq "$ROUNDS"); do
    for t in $TARGETS; do
      start "$r" "$t" || continue; p=$START_PID
      measure http "$r" "$t" "$p" "${PORT[$t]}"
      stop "$p"
    done
    if [ "$DO_ROUTERS" = 1 ]; then
      start "$r" gantry many && { p=$START_PID; measure routers10k "$r" gantry "$p" "${PORT[gantry]}" -10k; stop "$p"; }
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
  done
  stop "$OPID"
done

if [ "$DO_IDLE" = 1 ]; then
  oc=$(nginx_conf origin "$ORIGIN" 1); nginx -c "$oc" -e "$RUN/logs/origin.log" & OPID=$!; PIDS+=("$OPID"); sleep 0.5
  for t in nginx gantry; do
    start A "$t" || continue; p=$START_PID; ri=$(rss "$p")
    "$RUN/idleconns" -addr "127.0.0.1:${PORT[$t]}" -n "$IDLE_CONNS" -hold 20s > "$RUN/idle.out" 2>&1 & ip=$!
    for _ in $(seq 200); do grep -q '^open' "$RUN/idle.out" && break; sleep 0.2; done
    sleep 2; rl=$(rss "$p"); wait $ip || true
    echo "idle,A,$t,,,,$ri,$rl,,$(awk '{print $2}' "$RUN/idle.out")" >> "$OUT/runs.csv"
    log "idle $t: $(cat "$RUN/idle.out"); RSS ${ri} -> ${rl} KiB; $(( (rl - ri) * 1024 / IDLE_CONNS )) bytes/conn"
    stop "$p"
  done
  stop "$OPID"
fi
python3 "$HERE/summarize.py" "$OUT/runs.csv" "$IDLE_CONNS" | tee "$OUT/summary.md"

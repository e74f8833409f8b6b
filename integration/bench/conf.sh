# Configuration generators of run.sh (sourced by it): the nginx origin and
# proxy, HAProxy, Gantry's static and dynamic files. They read run.sh's
# variables (RUN, the ports, ORIGIN, NGX_STREAM, ...) when called.
# shellcheck shell=bash
nginx_conf() { # name port workers [tlsport] -> config path; the nginx origin when name=origin
  local name=$1 port=$2 workers=$3 tport=${4:-} body head= stream=
  if [ "$name" = origin ]; then
    # No file system on the request path: a fixed 1 KiB body from memory.
    body="server { listen 127.0.0.1:$port backlog=4096;
      location / { return 200 \"$ONE_K\"; }
      location = /upload { client_body_buffer_size 64k; return 200 \"ok\\n\"; }
      location = /origin-status { stub_status; } }"
  else
    body="upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; keepalive_requests 1000000; }
    upstream gorigin { server 127.0.0.1:$GORIGIN; keepalive 64; keepalive_requests 1000000; }
    server { listen 127.0.0.1:$port default_server backlog=4096; ${tport:+listen 127.0.0.1:$tport ssl http2 default_server backlog=4096;} server_name _; return 404; }
    server { listen 127.0.0.1:$port; ${tport:+listen 127.0.0.1:$tport ssl http2;} server_name bench.local;
      proxy_http_version 1.1; proxy_max_temp_file_size 0;
      location / { proxy_pass http://origin; proxy_set_header Connection \"\"; }
      location = /chunk64k { proxy_pass http://gorigin; proxy_set_header Connection \"\"; }
      location = /ws { proxy_pass http://gorigin; proxy_set_header Upgrade \$http_upgrade; proxy_set_header Connection upgrade; } }"
    if [ "$NGX_STREAM" = 1 ]; then # the TCP and UDP routes; the UDP session lasts while its client sends (no proxy_responses)
      head="load_module $NGX_STREAM_SO;"
      stream="stream {
  server { listen 127.0.0.1:${CPORT[nginx]} backlog=4096; proxy_pass 127.0.0.1:$TORIGIN; }
  server { listen 127.0.0.1:${BPORT[nginx]}; proxy_pass 127.0.0.1:$EORIGIN; }
  proxy_half_close on;   # as HAProxy and Gantry do: one direction's EOF does not end the other
  server { listen 127.0.0.1:${UPORT[nginx]} udp; proxy_pass 127.0.0.1:$UORIGIN; proxy_timeout 10s; } }"
    fi
  fi
  cat > "$RUN/$name.conf" <<NGX
$head
worker_processes $workers; worker_rlimit_nofile 65536; daemon off; pid $RUN/$name.pid; error_log $RUN/logs/$name.log warn;
events { worker_connections 30000; }
http { access_log off; default_type text/html; sendfile on; tcp_nodelay on; keepalive_requests 1000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/$name-tmp; proxy_temp_path $RUN/$name-tmp;
  ssl_certificate $RUN/tls/rsa.crt; ssl_certificate_key $RUN/tls/rsa.key; ssl_protocols TLSv1.2 TLSv1.3;
  ssl_ciphers ECDHE-RSA-AES256-GCM-SHA384; ssl_session_cache off; ssl_session_tickets off;
  $body }
$stream
NGX
  mkdir -p "$RUN/$name-tmp"; echo "$RUN/$name.conf"
}
haproxy_conf() { # threads
  cat > "$RUN/haproxy.cfg" <<HAP
global
    nbthread $1
    maxconn 9000
    maxpipes 256            # splice pipes (2 fds each) must fit with 2 x maxconn under a 20 000 fd limit
    tune.ssl.cachesize 0
    ssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets
    ssl-default-bind-ciphers ECDHE-RSA-AES256-GCM-SHA384
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 60s
    option http-keep-alive
frontend fe
    bind 127.0.0.1:${PORT[haproxy]} backlog 4096
    bind 127.0.0.1:${TPORT[haproxy]} ssl crt $RUN/tls/rsa.pem alpn h2,http/1.1 backlog 4096
    http-request return status 404 unless { req.hdr(host),lower,word(1,:) -m str bench.local }
    use_backend gbe if { path /chunk64k /ws }
    default_backend be
backend be
    server origin 127.0.0.1:$ORIGIN
backend gbe
    server gorigin 127.0.0.1:$GORIGIN
defaults
    mode tcp
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend l4
    bind 127.0.0.1:${CPORT[haproxy]} backlog 4096
    default_backend l4be
backend l4be
    server torigin 127.0.0.1:$TORIGIN
frontend bulk
    bind 127.0.0.1:${BPORT[haproxy]}
    option splice-request   # forced: splice-auto's heuristic never spliced here (sendto/recvfrom only, half the MB per CPU-second)
    option splice-response
    default_backend bulkbe
backend bulkbe
    option splice-request
    option splice-response
    server eorigin 127.0.0.1:$EORIGIN
HAP
  echo "$RUN/haproxy.cfg"
}
gantry_conf() { # dynamic-file-name cert(rsa|ecdsa) [obs variant: alog|metrics|trace1|trace001]
  local dyn=$1 cert=$2 obs=${3:-}
  cat > "$RUN/g/gantry.yml" <<GY
entryPoints:
  web: {address: "127.0.0.1:${PORT[gantry]}"}
  websecure: {address: "127.0.0.1:${TPORT[gantry]}"}
$([ "$dyn" = dyn-one.yml ] && printf '  l4tcp: {address: "127.0.0.1:%s"}\n  l4bulk: {address: "127.0.0.1:%s"}\n  l4udp: {address: "127.0.0.1:%s/udp"}' "${CPORT[gantry]}" "${BPORT[gantry]}" "${UPORT[gantry]}")
providers:
  file: {filename: "$RUN/g/$dyn", watch: false}
log: {level: ERROR}
store: {path: "$RUN/g/gantry-$RANDOM$RANDOM.db"}
GY
  if [ -n "${PPROF_PORT:-}" ]; then # Go's profiler on the API entrypoint (api.debug)
    sed -i "s|^entryPoints:|entryPoints:\n  traefik: {address: \"127.0.0.1:$PPROF_PORT\"}|" "$RUN/g/gantry.yml"
    printf 'api: {insecure: true, dashboard: false, debug: true}\n' >> "$RUN/g/gantry.yml"
  fi
  case $obs in # issue 17: JSON access log to a file; tracing over OTLP/HTTP to the origin's receiver
    alog) printf 'accessLog: {filePath: "%s", format: json}\n' "$RUN/logs/access.log" >> "$RUN/g/gantry.yml" ;;
    metrics) printf 'metrics: {prometheus: {addEntryPointsLabels: true, addRoutersLabels: true, addServicesLabels: true}}\n' >> "$RUN/g/gantry.yml" ;;
    trace1|trace001) printf 'tracing: {sampleRate: %s, otlp: {http: {endpoint: "http://127.0.0.1:%s/v1/traces"}}}\n' \
      "$([ "$obs" = trace1 ] && echo 1.0 || echo 0.01)" "$OTLP" >> "$RUN/g/gantry.yml" ;;
  esac
  if [ "$cert" = rsa ]; then
    printf 'tls:\n  certificates:\n    - {certFile: "%s", keyFile: "%s"}\n' "$RUN/tls/rsa.crt" "$RUN/tls/rsa.key" >> "$RUN/g/$dyn"
  fi
  echo "$RUN/g/gantry.yml"
}
dyn_one() {
  cat > "$RUN/g/dyn-one.yml" <<DY
http:
  routers:
    bench: {rule: "Host(\`bench.local\`)", service: origin, entryPoints: [web]}
    bench-go: {rule: "Host(\`bench.local\`) && (Path(\`/chunk64k\`) || Path(\`/ws\`))", service: gorigin, entryPoints: [web]}
    bench-tls: {rule: "Host(\`bench.local\`)", service: origin, entryPoints: [websecure], tls: {}}
  services:
    origin: {loadBalancer: {servers: [{url: "http://127.0.0.1:$ORIGIN"}]}}
    gorigin: {loadBalancer: {servers: [{url: "http://127.0.0.1:$GORIGIN"}]}}
tcp:
  routers:
    l4: {rule: "HostSNI(\`*\`)", service: torigin, entryPoints: [l4tcp]}
    bulk: {rule: "HostSNI(\`*\`)", service: eorigin, entryPoints: [l4bulk]}
  services:
    torigin: {loadBalancer: {servers: [{address: "127.0.0.1:$TORIGIN"}]}}
    eorigin: {loadBalancer: {servers: [{address: "127.0.0.1:$EORIGIN"}]}}
udp:
  routers:
    l4: {service: uorigin, entryPoints: [l4udp]}
  services:
    uorigin: {loadBalancer: {servers: [{address: "127.0.0.1:$UORIGIN"}]}}
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
  } > "$RUN/g/dyn-many.yml"
}

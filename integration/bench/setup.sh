#!/usr/bin/env bash
# Installs the tools run.sh and profile.sh use, from Debian, only those
# missing (fast when all are present; apt's own cache keeps the packages):
# nginx and its stream module (libnginx-mod-stream), haproxy, wrk, h2load
# (nghttp2-client), socat, openssl, curl, taskset (util-linux), python3.
# With sudo when not root. Not in scripts/setup/: CI does not run the bench.
set -euo pipefail
need=()
for t in nginx:nginx haproxy:haproxy wrk:wrk h2load:nghttp2-client openssl:openssl curl:curl taskset:util-linux python3:python3 socat:socat; do
  command -v "${t%%:*}" >/dev/null || [ -x "/usr/sbin/${t%%:*}" ] || need+=("${t#*:}")
done
[ -f /usr/lib/nginx/modules/ngx_stream_module.so ] || need+=(libnginx-mod-stream)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "integration/bench/setup.sh: installing ${need[*]}" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}" >/dev/null

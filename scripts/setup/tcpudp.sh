#!/usr/bin/env bash
# Installs the real servers and clients the TCP/UDP integration tests use
# (integration/tcpudp), from Debian, only those missing: redis-server and
# redis-cli, postgresql and psql, socat, dnsmasq, dig (dnsutils), openssl.
# Idempotent and fast when everything is present.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have redis-server && have redis-cli || need+=(redis-server redis-tools)
have psql || need+=(postgresql-client)
{ have initdb || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || need+=(postgresql)
have socat || need+=(socat)
have dnsmasq || need+=(dnsmasq-base)
have dig || need+=(dnsutils)
have openssl || need+=(openssl)
[ ${#need[@]} -eq 0 ] && exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
# --no-install-recommends keeps the install small; the packages' own
# services are never started by the tests (each starts its private instance).
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >&2

#!/usr/bin/env bash
# Installs Debian's bind9 (named), the authoritative DNS server the ACME
# DNS-01 test updates through RFC 2136 and Pebble resolves with
# (integration/acme). Idempotent and fast when named is present; waits for
# the apt/dpkg lock. It never starts the system service: the test runs its
# own named on a loopback port with a private configuration.
set -euo pipefail

if command -v named >/dev/null 2>&1 || [ -x /usr/sbin/named ]; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=600)
apt-get "${lock[@]}" update -qq
apt-get "${lock[@]}" install -y -qq --no-install-recommends bind9 >/dev/null
# The package starts its service; the tests need none.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet named 2>/dev/null; then
	systemctl stop named || true
fi
[ -x /usr/sbin/named ]

#!/usr/bin/env bash
# Installs Debian's redis-server for integration/cluster (two gantry
# processes sharing rateLimit buckets in Redis), only when missing.
# Idempotent and instant when it is present.
set -euo pipefail
command -v redis-server >/dev/null 2>&1 && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
# The package's own service is never used: each test starts its private
# instance on a free loopback port.
$sudo apt-get install -y -qq --no-install-recommends redis-server >&2

#!/usr/bin/env bash
# Installs what the Docker integration tests need: Debian's docker.io (dockerd,
# containerd, runc) and docker-compose. Idempotent and fast when both are
# present; waits for the apt/dpkg lock instead of failing when another
# installer is running. It never starts a daemon: the tests start their own
# dockerd with a private --data-root and socket (integration/docker).
set -euo pipefail

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
if ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
	need+=(docker-compose)
fi
if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=600)
apt-get "${lock[@]}" update -qq
# --no-install-recommends keeps the install small; iptables is needed by the
# bridge driver, and docker.io recommends but does not require it.
apt-get "${lock[@]}" install -y -qq --no-install-recommends "${need[@]}" iptables >/dev/null
command -v dockerd >/dev/null

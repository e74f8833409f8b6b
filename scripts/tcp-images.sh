#!/usr/bin/env bash
# Builds redis:local and postgres:local FROM scratch from this machine's
# Debian redis-server and postgresql (no registry is contacted), the same
# images the Docker integration tests build, for examples/tcp:
#
#   scripts/tcp-images.sh
#   cd examples/tcp && PROXY_IMAGE=gantry:local REDIS_IMAGE=redis:local \
#     POSTGRES_IMAGE=postgres:local ../../scripts/compose.sh up -d
#
# Installs what it needs with apt-get when run as root and missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
	else
		echo "tcp-images.sh: install ${need[*]} first (Debian: apt-get install ${need[*]})" >&2
		exit 1
	fi
fi
exec go run ./scripts/localimage "$@"

#!/usr/bin/env bash
# Runs Docker Compose under one spelling: the `docker compose` plugin when
# it is installed, else Debian's `docker-compose` (bookworm ships 1.29, no
# plugin). The README's commands and the Docker integration tests use it:
#
#   ./scripts/compose.sh up -d --build
#   ./scripts/compose.sh -f examples/tcp/docker-compose.yml up -d
set -euo pipefail
if docker compose version >/dev/null 2>&1; then
	exec docker compose "$@"
elif command -v docker-compose >/dev/null 2>&1; then
	exec docker-compose "$@"
fi
echo "compose.sh: neither 'docker compose' nor 'docker-compose' is installed (Debian: apt-get install docker-compose; or run scripts/setup/docker.sh)" >&2
exit 127

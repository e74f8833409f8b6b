#!/usr/bin/env bash
# Builds the gantry:local and whoami:local images from binaries compiled on
# this machine (CGO_ENABLED=0, static), FROM scratch with Dockerfile.local:
# no registry is contacted, so it works without Docker Hub. Then:
#
#   GANTRY_IMAGE=gantry:local WHOAMI_IMAGE=whoami:local ./scripts/compose.sh up -d
#
# Environment: GANTRY_IMAGE and WHOAMI_IMAGE name the images (defaults
# gantry:local, whoami:local); CA_BUNDLE is the CA roots file copied into
# the gantry image (default /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH=/usr/local/go/bin:$PATH
fi
gantry_image=${GANTRY_IMAGE:-gantry:local}
whoami_image=${WHOAMI_IMAGE:-whoami:local}
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -r "$ca" ] || { echo "image.sh: no CA roots at $ca (Debian: apt-get install ca-certificates; or set CA_BUNDLE)" >&2; exit 1; }

ctx=$(mktemp -d "${TMPDIR:-/tmp}/gantry-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
echo "image.sh: building static gantry, gantry-dns and whoami binaries (about 10 minutes of CPU from an empty build cache; seconds after scripts/quickstart.sh, which builds with the same flags)..." >&2
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$ctx/gantry" ./cmd/gantry
# lego's DNS-01 providers: gantry runs gantry-dns from its own directory.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$ctx/gantry-dns" ./cmd/gantry-dns
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$ctx/whoami" ./cmd/whoami
cp "$ca" "$ctx/ca-certificates.crt"
mkdir -p "$ctx/data"
cp Dockerfile.local "$ctx/Dockerfile"
echo "image.sh: docker build $gantry_image and $whoami_image (FROM scratch)..." >&2
docker build -q --build-arg TARGET=gantry -t "$gantry_image" "$ctx" >/dev/null
docker build -q --build-arg TARGET=whoami -t "$whoami_image" "$ctx" >/dev/null
echo "image.sh: built $gantry_image and $whoami_image. Run:" >&2
echo "  GANTRY_IMAGE=$gantry_image WHOAMI_IMAGE=$whoami_image ./scripts/compose.sh up -d" >&2

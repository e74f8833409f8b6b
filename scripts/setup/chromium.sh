#!/bin/sh
# Installs Debian's chromium for the dashboard browser test
# (integration/dashboard). Idempotent: exits at once when a chromium binary
# is already on PATH. Prints the binary's path.
set -eu

find_chromium() {
	for b in chromium chromium-browser google-chrome; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

if p=$(find_chromium); then
	echo "$p"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "chromium.sh: chromium is missing and apt-get is not available; install chromium by hand" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# Update the package lists only when they are absent (a fresh container).
if [ -z "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e '^lock$' -e '^partial$' || true)" ]; then
	$SUDO apt-get update -qq
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null; then
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi

find_chromium

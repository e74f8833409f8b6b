#!/usr/bin/env bash
# Builds a real Kubernetes control plane for the Kubernetes integration tests:
# kube-apiserver and kubectl (k8s.io/kubernetes v1.37.2, from the tool module
# integration/kubeapiserver) and etcd v3.7.3 (integration/etcdserver), and
# caches them by version. Prints the directory holding etcd, kube-apiserver
# and kubectl on stdout. Fast when cached; the first build takes about 14
# minutes of CPU on 2 cores (kube-apiserver alone ~9).
#
#   GANTRY_KUBE_DIR=$(scripts/setup/kubernetes.sh) go test ./integration/kubernetes/...
#
# The tests find the cached directory on their own (same path rule as below).
set -euo pipefail

kube=1.37.2
etcd=3.7.3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gantry/kube-$kube-etcd-$etcd

ok() {
	[ -x "$cache/kube-apiserver" ] && [ -x "$cache/kubectl" ] && [ -x "$cache/etcd" ] &&
		"$cache/kube-apiserver" --version 2>/dev/null | grep "^Kubernetes v$kube\$" >/dev/null &&
		"$cache/etcd" --version 2>/dev/null | grep "^etcd Version: $etcd\$" >/dev/null
}
if ok; then
	echo "$cache"
	exit 0
fi

mkdir -p "$cache"
echo "kubernetes.sh: building kube-apiserver, kubectl $kube and etcd $etcd once for the integration tests (~14 min of CPU on 2 cores); cached in $cache, later runs take a second" >&2
started=$(date +%s)
( while sleep 30; do echo "kubernetes.sh: still building ($(($(date +%s) - started))s)..." >&2; done ) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null' EXIT
minor=${kube#*.}; minor=${minor%%.*}
ld="-s -w -X k8s.io/component-base/version.gitVersion=v$kube -X k8s.io/component-base/version.gitMajor=${kube%%.*} -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
build() { # dir pkg out [ldflags]
	local tmp
	tmp=$(mktemp "$cache/$3.XXXXXX")
	for attempt in 1 2; do # a second attempt after a failed module download
		if ! (cd "$root/$1" && CGO_ENABLED=0 go build -trimpath -ldflags "${4:-}" -o "$tmp" "$2") 2>&1 | grep -v '^go: downloading' >&2; then :; fi
		[ ! -s "$tmp" ] || break
	done
	[ -s "$tmp" ] || { rm -f "$tmp"; echo "kubernetes.sh: go build $2 failed (see above)" >&2; exit 1; }
	mv "$tmp" "$cache/$3"
}
[ -x "$cache/kube-apiserver" ] || build integration/kubeapiserver k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver "$ld"
[ -x "$cache/kubectl" ] || build integration/kubeapiserver k8s.io/kubernetes/cmd/kubectl kubectl "$ld"
[ -x "$cache/etcd" ] || build integration/etcdserver go.etcd.io/etcd/server/v3 etcd "-s -w"
kill "$ticker" 2>/dev/null || true # once: a second kill at exit could reach a process that got its pid since
wait "$ticker" 2>/dev/null || true
trap - EXIT
ok || { echo "kubernetes.sh: built binaries do not report Kubernetes v$kube / etcd $etcd" >&2; exit 1; }
echo "kubernetes.sh: built in $(($(date +%s) - started))s" >&2
echo "$cache"

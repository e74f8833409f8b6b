// Package docker holds Gantry's end-to-end tests against a real Docker
// engine: the test harness starts its own dockerd (private --data-root,
// --exec-root and unix socket under a temporary directory), builds FROM
// scratch images of cmd/gantry and cmd/whoami from binaries compiled on the
// host, runs Gantry as a container on the same Docker network as labeled
// whoami containers (the sidecar model) with its entrypoint published on
// 127.0.0.1, and removes everything it started.
//
// The test process talks only to 127.0.0.1 (published ports) or, while
// dockerd is stopped and its port proxies are gone, to 127.0.0.1 inside
// Gantry's own network namespace.
//
// dockerd missing: the tests skip, naming scripts/setup/docker.sh.
package docker

// Command whoami is a tiny HTTP backend for Gantry's quickstart, tests,
// container images and benchmarks. Its flags and its echo format follow
// traefik/whoami (https://github.com/traefik/whoami), so compose files and
// scripts written for that image work unchanged.
//
// Flags:
//
//	--port N     TCP port to listen on (default 80, or env WHOAMI_PORT_NUMBER;
//	             0 picks a free port)
//	--name S     name echoed as "Name: S" and in /api (env WHOAMI_NAME)
//	--addr H:P   Gantry's: full listen address, overrides --port
//	             (e.g. 127.0.0.1:0)
//	--cert, --key  serve HTTPS with this certificate and key (PEM files)
//	--verbose    log every request to stderr
//
// On start it prints one line "whoami: listening on <addr>" to stdout, with
// the real address when port 0 was asked for.
//
// Endpoints:
//
//	/             echo: Name, Hostname, IP (one line each), RemoteAddr, the
//	              request line ("GET /path HTTP/1.1") and every header as
//	              "Name: value", one a line; ?wait=<duration> delays the answer
//	/api          the same as JSON
//	/health       GET answers with the current status (200 at start);
//	              POST with a status code as body (e.g. "503") sets it
//	/data?size=N  N bytes (unit=KB|MB|GB multiplies); ?attachment=true adds
//	              Content-Disposition
//	/bench        a fixed 1 KiB body (1024 bytes), for benchmarks
//	/ws, /echo    WebSocket echo (text and binary frames echoed as sent)
//	/events       Server-Sent Events: count events (default 5), one every
//	              interval milliseconds (default 100), each flushed at once
//
// It has no dependencies beyond gorilla/websocket and builds with
// CGO_ENABLED=0 for FROM scratch images.
package main

// Package upstream is Gantry's own HTTP/1.1 client for plain-HTTP upstreams:
// an http.RoundTripper that writes each request on a pooled keep-alive
// connection and reads the response from the caller's goroutine.
//
// Why: http.Transport hands every request to two goroutines of its own (a
// write loop and a read loop) and back through channels; under a proxy's
// load that hand-off, not the socket work, is most of its cost (see the
// issue 9 note for the profile). Here the request goroutine does the
// write, the read and the body hand-back itself, and nothing else runs.
//
// Scope: bodyless requests to http:// URLs, no Upgrade, no Expect, no
// trailers. Everything else (request bodies, https, h2c, WebSocket and
// other upgrades) goes to the Fallback transport, the standard library's,
// which writes a body while it reads the response. Responses are parsed by
// net/http's strict parser (http.ReadResponse), so framing rules are the
// standard library's: conflicting Content-Length and bad chunking are
// errors, never forwarded. A pooled connection is reused only when nothing
// is left in its buffer and a non-blocking peek finds it open and silent,
// so bytes a backend sends beyond a response never reach another request.
//
// Concurrency: a Transport is safe for concurrent use. A connection is owned
// by exactly one request from the moment it leaves the idle pool until its
// response body hits EOF (then it goes back) or is closed early (then the
// connection is closed). The idle pool per host is a buffered channel, so
// taking and returning a connection takes no lock.
package upstream

// Package upstream is Gantry's client to backends: one HTTP/1.1
// implementation for http:// and https:// servers, and x/net/http2 for
// h2c:// servers and https:// servers that negotiate h2 by ALPN.
//
// Host.Forward relays one request and its response between a client's
// http.ResponseWriter and a backend, from the request's own goroutine: the
// request head is serialised straight from the *http.Request (no header
// copy), the response head is parsed in the connection's read buffer into
// one string and written into the client's header map, and the body is
// copied from that buffer (and a pooled 32 KiB buffer) to the client,
// which is flushed whenever the backend pauses. A request body is written
// from the request goroutine when it is small and of known length, else
// streamed by one goroutine while the response is read, so an early final
// response (401, 413) reaches the client and stops the upload; "Expect:
// 100-continue" holds the body until the backend's 100 (or
// Options.ExpectContinueTimeout). 1xx responses are relayed with
// WriteHeader(1xx); a 101 to a WebSocket upgrade hijacks the client's
// connection and splices both ways with half-close.
//
// Framing is checked as strictly as Gantry's server checks requests (RFC
// 9112): CRLF only, no obs-fold, token field names, no control bytes in
// values, one Content-Length of digits, Transfer-Encoding exactly chunked
// and never with Content-Length, strict chunk lines, a head limit. A
// response that breaks a rule before its head reached the client is a
// *ProtocolError (502); a body that ends early or breaks its chunking
// after the head was sent is reported with Result.Sent, and the caller
// aborts the client's response so it never looks complete.
//
// Connections: a connection is owned by one exchange at a time and goes
// back to its Host's idle pool (a buffered channel: no lock) only after an
// exchange that ended cleanly — the whole request written, the whole
// response read, no Connection: close, nothing buffered beyond it. Every
// pooled connection is checked with one non-blocking peek before reuse
// (closed, reset or unsolicited bytes: dropped, so bytes a backend wrote
// unasked never become the next request's response), and a replayable
// bodyless request that meets a connection the server closed right after
// that check is sent again once on a new one.
//
// Cancellation: a read that waits more than 100 ms starts watching the
// request's context (context.AfterFunc), so a fast exchange allocates
// nothing for it and a slow one ends when the client goes away.
package upstream

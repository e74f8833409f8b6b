// Package h1 is Gantry's HTTP/1.1 server: the only one, for plain and TLS
// connections (ALPN http/1.1 or none). It reads requests with a strict RFC
// 9112 parser and calls an ordinary http.Handler, without net/http's
// per-request machinery (its background read goroutine, its buffered
// response writer chain); HTTP/2 stays on the standard library and feeds
// the same handler.
//
// Requests: origin-, absolute-, authority- (CONNECT) and asterisk-form
// (OPTIONS) targets; HTTP/1.1 and HTTP/1.0 (keep-alive only when asked
// for); pipelining; bodies framed by Content-Length or chunked, with
// trailers (Request.Trailer, for declared trailers, as net/http). The head
// is refused — answered 400 (431 for size or count, 501 for an unknown
// transfer coding, 505 for another version, 417 for an unknown
// expectation) and the connection closed after a lingering half-close, so
// no byte behind it is ever read as a request — when it has a bare LF,
// obs-fold, whitespace before a colon, a non-token name, CR/LF/NUL/CTL in a
// value, a missing, repeated or invalid Host, a Content-Length that is not
// digits or is repeated (even identical), Transfer-Encoding together with
// Content-Length or in HTTP/1.0, or a coding list other than a single
// chunked (RFC 9112 §2.2, §3, §5, §6; RFC 9110 §5.5; reliability.md §3.1).
// Gantry never repairs framing, so a request it serves is framed exactly
// one way. A malformed chunked body fails the body's Read and closes the
// connection after the response. The head limit (MaxHeaderBytes, 64 KiB by
// default) counts every byte of the head, CRLFs included: a head of
// exactly the limit is served.
//
// Expect: 100-continue: 100 Continue is sent when the handler first reads
// the body (or writes WriteHeader(100) itself), never after a final status
// was chosen. A handler that answers without reading the body gets its
// response sent with Connection: close and the connection closed, since
// the client may or may not send the body (RFC 9110 §10.1.1 allows either;
// closing cannot desynchronise). A body the handler left unread after 100
// Continue is drained up to 256 KiB to keep the connection, else it closes.
//
// Responses: every 1xx written with WriteHeader is sent at once (not to
// HTTP/1.0 clients). Content-Length when the handler sets it (a short body
// closes the connection), else the body is buffered up to BufferSize and
// sent with a computed Content-Length when the handler returns, or chunked
// once it flushes or outgrows the buffer (close-delimited for HTTP/1.0).
// HEAD, 1xx, 204 and 304 carry no body. Header values with CR, LF or NUL
// are rewritten to spaces. A handler that panics (http.ErrAbortHandler
// included) leaves its response incomplete: nothing more is written — for
// chunked no last chunk — and the connection is closed.
//
// The ResponseWriter implements http.Flusher, http.Hijacker (Upgrade and
// WebSocket: the returned connection replays bytes already read and
// half-closes with CloseWrite) and http.ResponseController's FlushError,
// SetReadDeadline, SetWriteDeadline and EnableFullDuplex (the body can
// always be read while the response is written).
//
// A client that disconnects while a bodyless request waits for an upstream
// is noticed after 100 ms (the request context is then cancelled); for
// requests with a body, it is noticed by the body's reads or the response
// write.
//
// Reuse: a busy connection reuses its *http.Request, URL, request and
// response header maps and (when nobody waited on it) the request context
// from one request to the next, so a keep-alive GET costs one allocation
// (the string holding the head). Hence the contract, stricter than
// net/http's: the Request, its Header, URL and Trailer, and the
// ResponseWriter's Header must not be used after ServeHTTP returns (clone
// what must outlive it, as the mirroring service does with Request.Clone);
// strings taken from them stay valid. The request context is cancelled
// when the client leaves, and, if it was waited on (Done, a derived
// context, context.AfterFunc), when ServeHTTP returns, as with net/http; a
// context nobody waited on is kept for the next request.
//
// Early answers: a connection closed with request bytes still unread (an
// early 413 to an upload, a refused head) is half-closed after the
// response, and what the client still sends is read and discarded (up to
// 8 MiB) until it closes, for at most 500 ms, so that no reset destroys
// the answer before the client has read it.
//
// Memory: a keep-alive connection waiting for its next request holds no
// read or write buffer (on Unix the wait is a readiness wait on the socket
// before a buffer is taken from a pool).
package h1

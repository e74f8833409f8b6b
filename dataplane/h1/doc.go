// Package h1 is Gantry's fast path for plain HTTP/1.1: a purpose-built
// server loop for the common request — a bodyless HTTP/1.1 request in
// origin form with a simple, strictly valid header block — that calls an
// ordinary http.Handler without net/http's per-request machinery (its
// context per request, its background read goroutine, its buffered
// response writer chain).
//
// Everything else is not parsed here but handed, untouched, to the
// standard library: the connection is passed to Fallback with every byte
// already read replayed first, at a request boundary, before any response
// byte of that request was written. So the standard server sees exactly
// what the client sent and applies its own strict rules (RFC 9112) to it.
// Handed over are: request bodies (Content-Length other than 0, any
// Transfer-Encoding), Upgrade and Expect requests, HTTP/1.0 and other
// versions, absolute-form, authority-form and asterisk-form targets,
// anything that is not strictly valid (bare LF, obs-fold, whitespace before
// a colon, CTL or NUL bytes in a field, a missing or repeated Host, non-token
// methods or field names), more than MaxHeaders fields, and header blocks
// that do not fit the connection's read buffer (BufferSize bytes). The rules
// follow RFC 9112 §2–§6 and RFC 9110 §5.5; reliability.md §3.1 lists them.
//
// Responses: Content-Length when the handler sets it (a short body closes
// the connection), else the body is buffered up to BufferSize and sent with a
// computed Content-Length when the handler returns, or chunked once it
// flushes or outgrows the buffer. HEAD, 1xx, 204 and 304 carry no body.
// Header values with CR or LF are rewritten to spaces, as net/http does.
//
// Unlike net/http, a client that disconnects while its request waits for
// an upstream is noticed only when the response is written (there is no
// background read); Gantry's finite upstream timeouts bound that wait.
package h1

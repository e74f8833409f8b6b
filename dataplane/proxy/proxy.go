package proxy

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/upstream"
)

// StatusClientClosedRequest is the status recorded (nginx's 499) when the
// client went away before the response was sent.
const StatusClientClosedRequest = 499

// Target is one server of a load-balancer service in one generation: the
// server as the pickers see it (shared backend state, active checker,
// weight, passive policy), its connection pool in the serversTransport's
// upstream Client, and how requests to it are shaped.
type Target struct {
	balance.Server
	name string // URL.String(), computed once (observer's Upstream)
	host *upstream.Host
	// passHost sends the client's Host (passHostHeader, default true);
	// else the server's host:port.
	passHost bool
	// prefix is the server URL's path when preservePath is set (case 034).
	prefix string
}

// NewTarget returns the Target of server u (as configured, path kept)
// with backend b, over client c: passHost sends the client's Host, else
// u's host:port; preservePath prefixes u's path to the request's. The
// caller sets the balance.Server's Weight, Passive and Check.
func NewTarget(u *url.URL, b *balance.Backend, c *upstream.Client, passHost, preservePath bool) *Target {
	t := &Target{Server: balance.Server{URL: u, Backend: b}, name: u.String(), host: c.Host(u.Scheme, u.Host), passHost: passHost}
	if preservePath {
		t.prefix = strings.TrimSuffix(u.EscapedPath(), "/")
	}
	return t
}

// outbound fills ob for r to t: the request as the middlewares left it
// (no header copy), the Host to send, the path prefix, and the peer
// appended to X-Forwarded-For. The other forwarding headers were set once
// on arrival (prepareForwarded).
func (t *Target) outbound(ob *upstream.Outbound, r *http.Request) {
	*ob = upstream.Outbound{Req: r, PathPrefix: t.prefix, ClientIP: peerIP(r.RemoteAddr)}
	if t.passHost {
		ob.Host = r.Host
	}
}

// answerError answers a forwarding error nothing of which reached the
// client, and returns the status, mapped like Traefik's ComputeStatusCode
// (pkg/proxy/httputil/proxy.go):
//
//   - the client went away (request context canceled): 499, nothing
//     written that the client could read;
//   - reading the client's body failed: 408 on a read timeout (the
//     entrypoint's readTimeout, case 035), else 400, and the connection is
//     closed after the answer;
//   - a timeout (dial or response headers, whether the backend sent
//     nothing or part of its head): 504;
//   - anything else (refused, reset, EOF, a malformed response): 502.
func answerError(w http.ResponseWriter, r *http.Request, err error) int {
	code := statusForError(r, err)
	if code == StatusClientClosedRequest {
		return code
	}
	if code == http.StatusRequestTimeout || code == http.StatusBadRequest {
		w.Header().Set("Connection", "close")
	}
	http.Error(w, http.StatusText(code), code)
	return code
}

// statusForError classifies a forwarding error.
func statusForError(r *http.Request, err error) int {
	if ce, ok := errors.AsType[*upstream.ClientError](err); ok {
		// The client's body failed, not the server. This check comes
		// before 499 because net/http cancels the request context when a
		// body read fails, yet the client may still be there to read the
		// answer.
		if ne, ok := errors.AsType[net.Error](ce.Err); ok && ne.Timeout() {
			return http.StatusRequestTimeout
		}
		if r.Context().Err() != nil {
			return StatusClientClosedRequest
		}
		return http.StatusBadRequest
	}
	if r.Context().Err() != nil {
		return StatusClientClosedRequest
	}
	if _, ok := errors.AsType[*upstream.ClientWriteError](err); ok {
		return StatusClientClosedRequest
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// serverFault reports whether err is the server's failure, charged to
// passive health: not the client's body, not the client going away.
func serverFault(r *http.Request, err error) bool {
	if err == nil {
		return false
	}
	switch statusForError(r, err) {
	case StatusClientClosedRequest, http.StatusRequestTimeout, http.StatusBadRequest:
		return false
	}
	return true
}

// logForward logs a forwarding error at Debug (nothing is logged at Info on
// the request path).
func logForward(log *slog.Logger, r *http.Request, t *Target, code int, err error) {
	if log.Enabled(r.Context(), slog.LevelDebug) {
		log.LogAttrs(r.Context(), slog.LevelDebug, "forwarding failed", slog.String("backend", t.name),
			slog.Int("status", code), slog.String("error", err.Error()))
	}
}

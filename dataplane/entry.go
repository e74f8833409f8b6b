package dataplane

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/certs"
	"github.com/gantry-proxy/gantry/dataplane/conninfo"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/dataplane/proxy"
)

// ServeHTTP is the entry handler of an entrypoint. It loads the live table
// once and keeps it for the whole request; it takes no lock.
//
// On arrival, before any middleware, it applies the arrival policy:
// OPTIONS * answered 200 here (as net/http does), an HTTP/1 CONNECT
// answered 405 and the connection closed, 431 (and close) for more than 100 header fields (h1 refuses them itself;
// this covers HTTP/2), removal of the client's hop-by-hop fields
// (removeHopByHop), Connection: close after the response when the
// connection reached keepAliveMaxRequests or keepAliveMaxTime, the
// forwarded-headers policy, 400 for an encoded character
// entryPoints.<name>.http.encodedCharacters denies, path sanitising, pending ACME HTTP-01
// challenges (SetChallenges); the entrypoint redirection is a router of the
// table (RedirectRoutes). Framing faults
// (CL+TE, obs-fold, ...) never get here: h1 refuses them and closes the
// connection.
// allowedMethods is the Allow field of the 405 answered to CONNECT (RFC
// 9110 §15.5.6 requires one): every standard method but CONNECT.
const allowedMethods = "GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE, PATCH"

func (e *entryPoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	if tooManyHeaders(r.Header) {
		w.Header().Set("Connection", "close")
		http.Error(w, "too many header fields", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	if r.Method == http.MethodOptions && r.URL.Path == "*" {
		// OPTIONS * asks about this server (RFC 9110 §9.3.7): answered
		// here as net/http (so Traefik) does, never routed or forwarded
		// (path cleaning would turn it into "OPTIONS /%2A").
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Method == http.MethodConnect && r.ProtoMajor == 1 {
		// CONNECT asks a forward proxy for a tunnel (RFC 9110 §9.3.6);
		// Gantry is a reverse proxy and has no route that tunnels, so it
		// is refused here rather than forwarded with a target the backend
		// cannot use. The connection closes: what a client sends after
		// CONNECT is tunnel data, never a request to parse.
		w.Header().Set("Allow", allowedMethods)
		w.Header().Set("Connection", "close")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	removeHopByHop(r)
	trusted := false
	if ci := conninfo.Of(r); ci != nil {
		trusted = ci.Trusted
		if r.ProtoMajor == 1 && e.keepAliveOver(ci) {
			w.Header().Set("Connection", "close")
		}
	}
	e.advertiseH3(w, r)
	proxy.PrepareForwarded(r, trusted, e.hostname)
	if len(e.denyEncoded) > 0 && deniedEncoded(r.URL.EscapedPath(), e.denyEncoded) {
		http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
		return
	}
	if e.sanitize {
		sanitizePath(r.URL)
	}
	if e.challenges != nil && certs.AnswerHTTP01(e.challenges, e.name, w, r) {
		return
	}
	if e.http01 && !e.acmeBypass && e.challenges != nil && r.TLS == nil && strings.HasPrefix(r.URL.Path, certs.ACMEChallengePath) {
		// The challenge path belongs to Gantry's resolvers here: a token
		// it does not know is 404, never redirected or routed (Traefik's
		// acme-http@internal; allowACMEByPass hands it to routing).
		http.NotFound(w, r)
		return
	}
	t := e.active.Load()
	var tracing *observe.Tracing
	if e.tracing != nil {
		tracing = e.tracing.Load()
	}
	if e.obs == nil && tracing == nil {
		t.Handler(e.name).ServeHTTP(w, r)
		return
	}
	_, h := t.Lookup(e.name, r)
	if h != nil {
		h.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	var tr *observe.Trace
	if tracing != nil {
		tr = tracing.StartUnrouted(r, e.name) // Traefik's EntryPoint span covers unrouted requests too
	}
	rw := &proxy.Exchange{ResponseWriter: w}
	t.Handler(e.name).ServeHTTP(rw, r)
	ev := observe.RequestEvent{
		Start: start, Duration: time.Since(start), EntryPoint: e.name,
		Method: r.Method, Host: r.Host, Path: conninfo.RequestTarget(r), Proto: r.Proto, ClientAddr: r.RemoteAddr,
		Status: rw.Status(), BytesOut: rw.Bytes(), TLS: r.TLS != nil, Header: r.Header, ResponseHeader: w.Header(),
	}
	if r.TLS != nil {
		ev.TLSVersion, ev.TLSCipher = r.TLS.Version, r.TLS.CipherSuite
	}
	ev.LocalPort = conninfo.LocalPort(r)
	tr.End(&ev)
	if e.obs != nil {
		e.obs.Request(&ev)
	}
}

// removeHopByHop removes, once, the hop-by-hop fields of the client's
// message (RFC 9110 §7.6.1, RFC 9113 §8.2.2): Connection and every field it
// names, Keep-Alive, Proxy-Connection, Proxy-Authorization,
// Transfer-Encoding, Trailer (the declared names stay in r.Trailer), TE
// unless it asks for trailers (then exactly "TE: trailers", as gRPC needs),
// and Upgrade and HTTP2-Settings unless the request is an HTTP/1.1
// WebSocket upgrade (then Upgrade: websocket and Connection: Upgrade are
// all that is kept; h2c and other protocols are never upgraded to,
// reliability.md §3.1 v32).
//
// It runs before any middleware, so a field that Gantry itself adds later
// (a headers middleware, X-Forwarded-*) survives whatever the client listed
// in Connection (the CVE-2021-32813 class). The outbound side (package
// upstream / proxy) must therefore NOT strip by the client's Connection list
// again: only its own connection management fields.
func removeHopByHop(r *http.Request) {
	h := r.Header
	upgrade := false
	if conn, ok := h["Connection"]; ok {
		for _, v := range conn {
			for tok := range strings.SplitSeq(v, ",") {
				tok = strings.TrimSpace(tok)
				switch {
				case tok == "":
				case strings.EqualFold(tok, "upgrade"):
					upgrade = true
				default:
					delete(h, http.CanonicalHeaderKey(tok))
				}
			}
		}
		delete(h, "Connection")
	}
	for _, k := range hopHeaders {
		delete(h, k)
	}
	if te, ok := h["Te"]; ok {
		switch {
		case len(te) == 1 && te[0] == "trailers":
			// Already exactly what is kept (every gRPC request): no new list.
		case headerValuesContain(te, "trailers"):
			h["Te"] = []string{"trailers"}
		default:
			delete(h, "Te")
		}
	}
	if up, ok := h["Upgrade"]; ok {
		if upgrade && r.ProtoMajor == 1 && r.ProtoMinor == 1 && len(up) == 1 && strings.EqualFold(strings.TrimSpace(up[0]), "websocket") {
			h["Upgrade"] = []string{"websocket"}
			h["Connection"] = []string{"Upgrade"}
		} else {
			delete(h, "Upgrade")
		}
	}
	delete(h, "Http2-Settings")
}

// hopHeaders are removed on arrival whatever Connection says; TE and
// Upgrade have their own rules (removeHopByHop).
var hopHeaders = [...]string{"Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Transfer-Encoding", "Trailer"}

// headerValuesContain reports whether any comma-separated element of vs,
// with its parameters cut off, equals tok (case-insensitive).
func headerValuesContain(vs []string, tok string) bool {
	for _, v := range vs {
		for el := range strings.SplitSeq(v, ",") {
			el, _, _ = strings.Cut(el, ";")
			if strings.EqualFold(strings.TrimSpace(el), tok) {
				return true
			}
		}
	}
	return false
}

// maxHeaderFields caps the header fields of a request (field lines, not
// names), like Envoy and HAProxy (≈100); reliability.md §3.3 and F7.
const maxHeaderFields = 100

func tooManyHeaders(h http.Header) bool {
	if len(h) <= maxHeaderFields {
		return false
	}
	n := 0
	for _, v := range h {
		n += len(v)
	}
	return n > maxHeaderFields
}

// keepAliveOver counts a request on the connection and reports whether
// the connection has reached transport.keepAliveMaxRequests or
// keepAliveMaxTime, so this response closes it (Traefik's options).
func (e *entryPoint) keepAliveOver(ci *conninfo.Info) bool {
	if e.keepAliveMaxRequests == 0 && e.keepAliveMaxTime == 0 {
		return false
	}
	n := ci.Requests.Add(1)
	return (e.keepAliveMaxRequests > 0 && n >= e.keepAliveMaxRequests) ||
		(e.keepAliveMaxTime > 0 && time.Since(ci.Start) >= e.keepAliveMaxTime)
}

// redirect is http.redirections.entryPoint: every request is redirected to
// the same host and URI on another entrypoint's port with scheme.
// Source: https://doc.traefik.io/traefik/routing/entrypoints/#redirection
type redirect struct {
	scheme    string
	port      string // "" for the scheme's default port
	permanent bool
}

func newRedirect(c *static.RedirectEntryPoint, all map[string]*static.EntryPoint) (*redirect, error) {
	rd := &redirect{scheme: "https", permanent: c.Permanent == nil || *c.Permanent}
	if c.Scheme != "" {
		rd.scheme = strings.ToLower(c.Scheme)
	}
	if c.To == "" {
		return nil, errors.New("to is empty")
	}
	var port string
	if target, ok := all[c.To]; ok && target != nil {
		addr, err := parseAddress(target.Address)
		if err != nil {
			return nil, err
		}
		_, port, _ = net.SplitHostPort(addr)
	} else {
		port = strings.TrimPrefix(c.To, ":")
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, errors.New("to " + strconv.Quote(c.To) + " is neither an entrypoint nor a port")
		}
	}
	if !(rd.scheme == "https" && port == "443") && !(rd.scheme == "http" && port == "80") {
		rd.port = port
	}
	return rd, nil
}

// ServeHTTP answers 301/302 for GET and HEAD, 308/307 otherwise (so the
// method and body are kept).
func (rd *redirect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if rd.port != "" {
		host += ":" + rd.port
	}
	code := http.StatusFound
	switch {
	case rd.permanent && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		code = http.StatusMovedPermanently
	case rd.permanent:
		code = http.StatusPermanentRedirect
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		code = http.StatusTemporaryRedirect
	}
	http.Redirect(w, r, rd.scheme+"://"+host+r.URL.RequestURI(), code)
}

package proxy

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gantry-proxy/gantry/dataplane/httpwire"
)

// managedHeaders are the forwarding headers Gantry sets. From an untrusted
// peer they are deleted at the entrypoint, together with their underscore
// spellings (X_Forwarded_For), before routing and middlewares run; from a
// trusted peer they are kept and completed (case 026).
// Source: https://doc.traefik.io/traefik/routing/entrypoints/#forwarded-headers
var managedHeaders = []string{
	"X-Forwarded-For",
	"X-Forwarded-Proto",
	"X-Forwarded-Host",
	"X-Forwarded-Port",
	"X-Forwarded-Server",
	"X-Forwarded-Prefix",
	"X-Forwarded-Uri",
	"X-Forwarded-Method",
	"X-Forwarded-Tls-Client-Cert",
	"X-Forwarded-Tls-Client-Cert-Info",
	"X-Real-Ip",
}

// isManaged reports whether canonical is one of managedHeaders (a switch:
// it runs for every field of every request).
func isManaged(canonical string) bool {
	switch canonical {
	case "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Port",
		"X-Forwarded-Server", "X-Forwarded-Prefix", "X-Forwarded-Uri", "X-Forwarded-Method",
		"X-Forwarded-Tls-Client-Cert", "X-Forwarded-Tls-Client-Cert-Info", "X-Real-Ip":
		return true
	}
	return false
}

// isFraming reports whether canonical names a field that frames or routes
// the message or is hop-by-hop. Its underscore spelling (Transfer_Encoding)
// is never legitimate and a CGI/WSGI-style backend folds it onto the real
// name, so it is deleted like a managed header's.
func isFraming(canonical string) bool {
	switch canonical {
	case "Content-Length", "Transfer-Encoding", "Host", "Connection", "Upgrade",
		"Te", "Trailer", "Keep-Alive", "Proxy-Connection", "Expect":
		return true
	}
	return false
}

// PrepareForwarded applies the entrypoint's forwarded-headers policy to an
// inbound request, in place. trusted is the peer's trust decision; server is
// Gantry's host name (X-Forwarded-Server).
//
//   - Untrusted: every managed header (and its underscore spelling) is
//     deleted. Trusted: underscore spellings are deleted all the same
//     (reliability.md §8.4), the rest is kept. Underscore spellings of
//     framing and hop-by-hop fields (isFraming) are always deleted.
//   - Then X-Forwarded-Proto (http, https, ws, wss), X-Forwarded-Host (from
//     Host), X-Forwarded-Port (port of Host, else 443 for https/wss, else
//     80) and X-Real-Ip (the peer) are set when absent, and
//     X-Forwarded-Server is set to server.
//
// X-Forwarded-For is completed by the proxy (peer appended, ", "-joined).
func PrepareForwarded(r *http.Request, trusted bool, server string) {
	h := r.Header
	// One pass over the fields (a request has a few; deleting 11 absent
	// names would hash each of them).
	for k := range h {
		if !trusted && isManaged(k) {
			delete(h, k)
		} else if strings.IndexByte(k, '_') >= 0 {
			if d := http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-")); isManaged(d) || isFraming(d) {
				delete(h, k)
			}
		}
	}
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	if isWebSocket(r) {
		proto = "ws"
		if r.TLS != nil {
			proto = "wss"
		}
	}
	// From an untrusted peer the managed fields are gone: no lookups.
	// Values are shared one-element slices (see fwdValues): no allocation
	// per request for values seen before.
	if v := fieldIf(trusted, h, "X-Forwarded-Proto"); len(v) == 0 {
		h["X-Forwarded-Proto"] = protoValue(proto)
	} else {
		proto = v[0]
	}
	if r.Host != "" && len(fieldIf(trusted, h, "X-Forwarded-Host")) == 0 {
		h["X-Forwarded-Host"] = fwdValues.of(r.Host)
	}
	if len(fieldIf(trusted, h, "X-Forwarded-Port")) == 0 {
		h["X-Forwarded-Port"] = portValue(forwardedPort(r.Host, proto))
	}
	if len(fieldIf(trusted, h, "X-Real-Ip")) == 0 {
		if ip := peerIP(r.RemoteAddr); ip != "" {
			h["X-Real-Ip"] = fwdValues.of(ip)
		}
	}
	if server != "" {
		h["X-Forwarded-Server"] = serverValue(server)
	}
}

// fieldIf returns h[k] when look is true, else nil (without hashing k).
func fieldIf(look bool, h http.Header, k string) []string {
	if !look {
		return nil
	}
	return h[k]
}

// The shared values of the common X-Forwarded-Proto and X-Forwarded-Port
// fields (capacity 1, like fwdValues'), and the last X-Forwarded-Server.
var (
	protoHTTP, protoHTTPS = []string{"http"}[:1:1], []string{"https"}[:1:1]
	protoWS, protoWSS     = []string{"ws"}[:1:1], []string{"wss"}[:1:1]
	port80, port443       = []string{"80"}[:1:1], []string{"443"}[:1:1]
	lastServer            atomic.Pointer[[]string]
)

func protoValue(p string) []string {
	switch p {
	case "http":
		return protoHTTP
	case "https":
		return protoHTTPS
	case "ws":
		return protoWS
	case "wss":
		return protoWSS
	}
	return fwdValues.of(p)
}

func portValue(p string) []string {
	switch p {
	case "80":
		return port80
	case "443":
		return port443
	}
	return fwdValues.of(p)
}

// serverValue is fwdValues.of(s), remembering the last s: an entrypoint's
// host name is the same on every request.
func serverValue(s string) []string {
	if p := lastServer.Load(); p != nil && (*p)[0] == s {
		return *p
	}
	v := fwdValues.of(s)
	lastServer.Store(&v)
	return v
}

// fwdValues interns the forwarding headers' values.
var fwdValues = newValueCache(4096)

// valueCache hands out shared one-element slices of capacity 1 for header
// values seen before, as the headers middleware does with its own values:
// append on such a slice copies, and nothing writes header values in
// place. Reads are one map lookup in an immutable map (no lock); a new
// value copies the map, so at most max values are cached (host names and
// client addresses are chosen by strangers), then new ones are allocated
// per request.
type valueCache struct {
	m   atomic.Pointer[map[string][]string]
	mu  sync.Mutex
	max int
}

func newValueCache(max int) *valueCache {
	c := &valueCache{max: max}
	m := map[string][]string{}
	c.m.Store(&m)
	return c
}

// of returns a []string{v} of capacity 1, shared when v was seen before.
func (c *valueCache) of(v string) []string {
	cur := *c.m.Load()
	if s, ok := cur[v]; ok {
		return s
	}
	s := []string{v}[:1:1]
	if len(cur) >= c.max {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.m.Load()
	if len(old) >= c.max {
		return s
	}
	if cur, ok := old[v]; ok {
		return cur
	}
	m := make(map[string][]string, len(old)+1)
	for k, x := range old {
		m[k] = x
	}
	v = strings.Clone(v) // the key must not pin the request's buffers
	s = []string{v}[:1:1]
	m[v] = s
	c.m.Store(&m)
	return s
}

// forwardedPort derives X-Forwarded-Port like Traefik: the port of Host if
// it has one, else 443 for https/wss, else 80.
func forwardedPort(host, proto string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		if p := host[i+1:]; p != "" {
			return p
		}
	}
	if proto == "https" || proto == "wss" {
		return "443"
	}
	return "80"
}

// peerIP returns the IP of a RemoteAddr "ip:port" ("" if it has none).
func peerIP(remote string) string {
	ip, _, err := net.SplitHostPort(remote)
	if err != nil {
		return ""
	}
	return ip
}

// isWebSocket reports an HTTP/1.1 WebSocket upgrade request (RFC 6455 §4.1):
// a Connection header with the "upgrade" token and Upgrade: websocket.
func isWebSocket(r *http.Request) bool {
	up := r.Header["Upgrade"] // canonical: no Get, which canonicalises the name again
	return len(up) > 0 && strings.EqualFold(strings.TrimSpace(up[0]), "websocket") && httpwire.HasToken(r.Header["Connection"], "upgrade")
}

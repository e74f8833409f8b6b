package middleware

import (
	"net"
	"net/http"
	"strings"
)

// requestScheme returns the scheme the client used: "https" for a TLS
// connection, overridden by X-Forwarded-Proto ("http"/"ws" mean http,
// "https"/"wss" mean https, case-insensitively; other values are ignored).
// X-Forwarded-Proto is trusted as seen: the dataplane strips X-Forwarded-*
// from peers that are not trusted proxies before middlewares run (case 027).
func requestScheme(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	switch p := r.Header.Get("X-Forwarded-Proto"); {
	case strings.EqualFold(p, "http"), strings.EqualFold(p, "ws"):
		scheme = "http"
	case strings.EqualFold(p, "https"), strings.EqualFold(p, "wss"):
		scheme = "https"
	}
	return scheme
}

// requestURI returns the origin-form request target ("/path?query").
func requestURI(r *http.Request) string {
	if strings.HasPrefix(r.RequestURI, "/") {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}

// splitHostPort splits a Host header value into host and port ("" when
// absent); IPv6 literals keep their brackets.
func splitHostPort(hostport string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, ""
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h, p
}

// defaultPort reports whether port is the default one for scheme.
func defaultPort(scheme, port string) bool {
	return port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443")
}

// redirect answers a redirect to location: permanent gives 301 for GET and
// 308 otherwise, temporary 302 for GET and 307 otherwise (Traefik's rule,
// which keeps the method of non-GET requests).
func redirect(w http.ResponseWriter, r *http.Request, location string, permanent bool) {
	code := http.StatusFound
	switch {
	case permanent && r.Method == http.MethodGet:
		code = http.StatusMovedPermanently
	case permanent:
		code = http.StatusPermanentRedirect
	case r.Method != http.MethodGet:
		code = http.StatusTemporaryRedirect
	}
	w.Header().Set("Location", location)
	w.WriteHeader(code)
	_, _ = w.Write([]byte(http.StatusText(code)))
}

package middleware

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// newStripPrefix removes the first of c.Prefixes (in list order) that the
// path starts with, as a plain string prefix (not segment-aware: "/app"
// strips "/application" to "/lication", as in Traefik), keeps a leading
// "/", and adds X-Forwarded-Prefix with the stripped prefix. There is no
// implicit redirect from "/app" to "/app/" (case 023). The deprecated
// forceSlash option is accepted and has no effect: the result always starts
// with "/", Traefik v3's behaviour. A result with a dot-segment or an empty
// segment ("/public../x" stripped to "/../x") is answered 400, never
// forwarded, as by Traefik (case 025).
// Source: https://doc.traefik.io/traefik/middlewares/http/stripprefix/
func newStripPrefix(c *config.StripPrefix) (Middleware, error) {
	type prefix struct {
		p      string
		header []string // X-Forwarded-Prefix value, shared (see kv)
	}
	prefixes, err := parseRequired("prefixes", c.Prefixes, func(p string) (prefix, error) {
		if p == "" {
			return prefix{}, errors.New("empty prefix")
		}
		return prefix{p, []string{p}[:1:1]}, nil
	})
	if err != nil {
		return nil, err
	}
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		for _, p := range prefixes {
			if !strings.HasPrefix(r.URL.Path, p.p) {
				continue
			}
			r = stripPath(r, p.p, p.header)
			if climbs(r.URL.EscapedPath()) {
				badRewrite(w) // "/public../x" stripped to "/../x" (case 025)
				return
			}
			break
		}
		next.ServeHTTP(w, r)
	}), nil
}

// stripPath removes prefix (as found in the decoded path) from r's path and
// raw path, and records header (the one-value X-Forwarded-Prefix) on it.
func stripPath(r *http.Request, prefix string, header []string) *http.Request {
	path := ensureLeadingSlash(strings.TrimPrefix(r.URL.Path, prefix))
	raw := ""
	if r.URL.RawPath != "" {
		// The raw path encodes the same prefix; strip its escaped form.
		esc := r.URL.EscapedPath()
		if p := escapedPrefix(esc, prefix); p != "" {
			raw = ensureLeadingSlash(esc[len(p):])
		}
	}
	r.Header[headerForwardedPrefix] = header
	return withPath(r, path, raw)
}

// escapedPrefix returns the prefix of esc that unescapes to exactly
// len(prefix) bytes, or "" when esc is shorter.
func escapedPrefix(esc, prefix string) string {
	n := 0
	for i := 0; i < len(esc); {
		if n == len(prefix) {
			return esc[:i]
		}
		if esc[i] == '%' && i+2 < len(esc) {
			i += 3
		} else {
			i++
		}
		n++
	}
	if n == len(prefix) {
		return esc
	}
	return ""
}

package middleware

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// headerOps is a compiled config.HeaderModifier: canonical names, sorted
// so that the result does not depend on map iteration.
type headerOps struct {
	set, add []kv
	remove   []string
}

func compileHeaderOps(c *config.HeaderModifier) (headerOps, error) {
	var o headerOps
	for field, m := range map[string]map[string]string{"set": c.Set, "add": c.Add} {
		for k, v := range m {
			if k == "" || strings.ContainsAny(k, " :\r\n\t") {
				return o, errField(field, "header name %q is not a token", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return o, errField(field+"."+k, "value contains CR, LF or NUL")
			}
			if field == "set" {
				o.set = append(o.set, newKV(http.CanonicalHeaderKey(k), v))
			} else {
				o.add = append(o.add, newKV(http.CanonicalHeaderKey(k), v))
			}
		}
	}
	for _, k := range c.Remove {
		o.remove = append(o.remove, http.CanonicalHeaderKey(k))
	}
	byKey := func(a, b kv) int { return strings.Compare(a.k, b.k) }
	slices.SortFunc(o.set, byKey)
	slices.SortFunc(o.add, byKey)
	return o, nil
}

// apply edits h: set, then add (appending a value), then remove.
func (o *headerOps) apply(h http.Header) {
	for _, s := range o.set {
		h[s.k] = s.v
	}
	for _, a := range o.add {
		if old := h[a.k]; len(old) > 0 {
			h[a.k] = append(slices.Clip(old), a.v[0])
		} else {
			h[a.k] = a.v
		}
	}
	for _, k := range o.remove {
		delete(h, k)
	}
}

// newRequestHeaderModifier edits the request headers sent upstream
// (Gateway API RequestHeaderModifier filter).
func newRequestHeaderModifier(c *config.HeaderModifier) (Middleware, error) {
	o, err := compileHeaderOps(c)
	if err != nil {
		return nil, err
	}
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		o.apply(r.Header)
		next.ServeHTTP(w, r)
	}), nil
}

// newResponseHeaderModifier edits the response headers sent to the client
// (Gateway API ResponseHeaderModifier filter), also on answers Gantry
// makes itself downstream of it.
func newResponseHeaderModifier(c *config.HeaderModifier) (Middleware, error) {
	o, err := compileHeaderOps(c)
	if err != nil {
		return nil, err
	}
	hook := hookFunc(func(h http.Header, code int) int {
		o.apply(h)
		return code
	})
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		hw := &hookWriter{ResponseWriter: w, hook: hook}
		next.ServeHTTP(hw, r)
		hw.finish()
	}), nil
}

// replacePrefix replaces the leading prefix match of p (element-wise, as
// the Gateway API's PathPrefix match) with repl; see config.URLRewrite.
// p is assumed to match prefix.
func replacePrefix(p, prefix, repl string) string {
	prefix = strings.TrimRight(prefix, "/")
	rest := ""
	if len(p) >= len(prefix) && strings.HasPrefix(p, prefix) {
		rest = p[len(prefix):]
	}
	out := strings.TrimRight(repl, "/") + rest
	if out == "" {
		return "/"
	}
	return out
}

// rewritePath returns the new path for the Path/PathPrefix fields of a
// redirect or rewrite, and whether they change it.
func rewritePath(p string, full, prefix *string, match string) (string, bool) {
	switch {
	case full != nil:
		return ensureLeadingSlash(*full), true
	case prefix != nil:
		return replacePrefix(p, match, *prefix), true
	}
	return p, false
}

// newRequestRedirect answers a redirect (Gateway API RequestRedirect
// filter); see config.RequestRedirect.
func newRequestRedirect(c *config.RequestRedirect) (Middleware, error) {
	code := c.StatusCode
	switch code {
	case 0:
		code = http.StatusFound
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil, errField("statusCode", "%d is not one of 301, 302, 303, 307, 308", code)
	}
	scheme := strings.ToLower(c.Scheme)
	if scheme != "" && scheme != "http" && scheme != "https" {
		return nil, errField("scheme", "%q is not http or https", c.Scheme)
	}
	if c.Port < 0 || c.Port > 65535 {
		return nil, errField("port", "%d is out of range", c.Port)
	}
	if strings.ContainsAny(c.Hostname, "/?#@ \r\n") {
		return nil, errField("hostname", "%q is not a host name", c.Hostname)
	}
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := scheme
			if s == "" {
				s = requestScheme(r)
			}
			host, _ := splitHostPort(r.Host)
			if c.Hostname != "" {
				host = c.Hostname
			}
			port := ""
			if c.Port != 0 && !defaultPort(s, strconv.Itoa(c.Port)) {
				port = ":" + strconv.Itoa(c.Port)
			}
			u := url.URL{Scheme: s, Host: host + port, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
			if np, ok := rewritePath(r.URL.Path, c.Path, c.PathPrefix, c.PathMatch); ok {
				u.Path, u.RawPath = np, ""
			}
			w.Header().Set("Location", u.String())
			w.WriteHeader(code)
		})
	}, nil
}

// newURLRewrite rewrites the host and path sent upstream (Gateway API
// URLRewrite filter); see config.URLRewrite.
func newURLRewrite(c *config.URLRewrite) (Middleware, error) {
	if strings.ContainsAny(c.Hostname, "/?#@ \r\n") {
		return nil, errField("hostname", "%q is not a host name", c.Hostname)
	}
	if c.Path == nil && c.PathPrefix == nil && c.Hostname == "" {
		return nil, fmt.Errorf("neither hostname nor path is set")
	}
	return handle(func(next http.Handler, w http.ResponseWriter, r *http.Request) {
		if c.Hostname != "" {
			r.Host = c.Hostname
		}
		if np, ok := rewritePath(r.URL.Path, c.Path, c.PathPrefix, c.PathMatch); ok {
			raw := (&url.URL{Path: np}).EscapedPath()
			if raw == np {
				raw = ""
			}
			r = withPath(r, np, raw)
		}
		next.ServeHTTP(w, r)
	}), nil
}

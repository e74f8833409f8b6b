package middleware

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Headers set by the path-rewriting middlewares (Traefik names).
const (
	headerForwardedPrefix = "X-Forwarded-Prefix"
	headerReplacedPath    = "X-Replaced-Path"
)

// withPath returns a shallow copy of r whose URL has path and rawPath and
// whose RequestURI matches it. The original request is left untouched, so
// an outer middleware that replays it (retry) or reports it (errors, access
// log) still sees what the client sent.
func withPath(r *http.Request, path, rawPath string) *http.Request {
	c := new(struct {
		req http.Request
		url url.URL
	}) // one allocation for both copies
	c.req, c.url = *r, *r.URL
	c.url.Path, c.url.RawPath = path, rawPath
	c.req.URL = &c.url
	c.req.RequestURI = c.url.RequestURI()
	return &c.req
}

// ensureLeadingSlash returns p with a leading "/" ("" becomes "/").
func ensureLeadingSlash(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return "/" + p
}

// climbs reports whether the escaped path esc, as a middleware rewrote it,
// is not its own clean form: a dot-segment ("/../x", "/./x") or an empty
// segment ("//x") that a backend would resolve, possibly above the root.
// Reserved escapes stay escaped ("/..%2Fx" is clean: "..%2Fx" is one
// segment). Traefik rejects such a result with 400 ("sanitized path is not
// equivalent to stripped path", url.URL.JoinPath on the escaped path) in
// stripPrefix, stripPrefixRegex and replacePathRegex (case 025).
func climbs(esc string) bool {
	if esc == "" || esc == "/" {
		return false
	}
	c := path.Clean(esc)
	if strings.HasSuffix(esc, "/") && c != "/" {
		c += "/"
	}
	return c != esc
}

// badRewrite answers 400 to a request whose rewritten path climbs.
func badRewrite(w http.ResponseWriter) {
	http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
}

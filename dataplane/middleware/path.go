package middleware

import (
	"net/http"
	"net/url"
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

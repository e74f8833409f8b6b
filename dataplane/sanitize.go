package dataplane

import (
	"net/url"
	"path"
	"strings"
)

// sanitizePath removes ".", ".." and empty segments from u's path before
// routing, keeping a trailing slash, so that "/x/../admin" and "//admin"
// are routed (and forwarded) as "/admin" and cannot slip past a router
// that guards "/admin" with a middleware. Percent-encoded dots are dots
// here, because u.Path is decoded (RFC 3986 §2.3, §6.2.2.3). RawPath, kept
// by net/url only for reserved escapes such as %2F, is cleaned the same way
// and dropped when it no longer encodes the cleaned path.
// Source: https://doc.traefik.io/traefik/security/request-path/ (Traefik's
// entryPoints.<name>.http.sanitizePath, on by default).
func sanitizePath(u *url.URL) {
	if !needsClean(u.Path) {
		return
	}
	u.Path = cleanPath(u.Path)
	if u.RawPath != "" {
		raw := cleanPath(decodeDots(u.RawPath))
		if p, err := url.PathUnescape(raw); err == nil && p == u.Path {
			u.RawPath = raw
		} else {
			u.RawPath = ""
		}
	}
}

// needsClean reports whether p has a ".", ".." or empty segment; the
// common path has none and costs one scan.
func needsClean(p string) bool {
	if p == "" || p[0] != '/' {
		return p != ""
	}
	return strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
		strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..")
}

// cleanPath is path.Clean rooted at "/", keeping a trailing slash.
func cleanPath(p string) string {
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// decodeDots turns percent-encoded dots back into dots, so ".." written as
// "%2e%2e" is a dot-segment in the raw path too.
func decodeDots(p string) string {
	if !strings.Contains(p, "%2") {
		return p
	}
	return strings.NewReplacer("%2e", ".", "%2E", ".").Replace(p)
}

package dataplane

import (
	"net/url"
	"path"
	"strings"
)

// sanitizePath removes ".", ".." and empty segments from u's path before
// routing, keeping a trailing slash, so that "/x/../admin" and "//admin"
// are routed (and forwarded) as "/admin" and cannot slip past a router
// that guards "/admin" with a middleware. It works on the path as sent
// with only percent-encoded dots decoded (%2e is the unreserved ".", RFC
// 3986 §2.3, §6.2.2.3), so "%2e%2e" is a dot-segment while reserved
// escapes stay what they are: in "/public/%2E%2E%2Fadmin" the segment
// "..%2Fadmin" is not a dot-segment, and the path routes under /public and
// reaches the backend as "/public/..%2Fadmin" (case 025). Other escapes
// are kept as sent ("%2f" stays lower-case; Traefik upper-cases it). u.Path
// and u.RawPath are set from the result.
// Source: https://doc.traefik.io/traefik/security/request-path/ (Traefik's
// entryPoints.<name>.http.sanitizePath, on by default).
func sanitizePath(u *url.URL) {
	if u.RawPath == "" {
		// The path has no escape that changes its meaning: u.Path is it.
		if needsClean(u.Path) {
			u.Path = cleanPath(u.Path)
		}
		return
	}
	raw := decodeDots(u.RawPath) // forwarded with its dots decoded, as Traefik does
	if needsClean(raw) {
		raw = cleanPath(raw)
	} else if raw == u.RawPath {
		return
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		u.Path, u.RawPath = cleanPath(u.Path), ""
		return
	}
	u.Path, u.RawPath = p, raw
	if u.EscapedPath() != raw {
		u.RawPath = "" // raw is not a valid encoding of p; p alone is exact
	} else if (&url.URL{Path: p}).EscapedPath() == raw {
		u.RawPath = "" // the default encoding: RawPath not needed
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

// deniedEncoded reports whether the escaped path esc holds one of the
// escapes in deny (upper-case hex such as "2F"; either case matches), or a
// '%' not followed by two characters, as Traefik's entrypoint check does.
func deniedEncoded(esc string, deny []string) bool {
	for i := 0; i < len(esc); i++ {
		if esc[i] != '%' {
			continue
		}
		if i+2 >= len(esc) {
			return true
		}
		code := strings.ToUpper(esc[i+1 : i+3])
		for _, d := range deny {
			if code == d {
				return true
			}
		}
		i += 2
	}
	return false
}

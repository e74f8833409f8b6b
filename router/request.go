package router

import (
	"net/http"
	"strings"

	"github.com/gantry-proxy/gantry/internal/ascii"
)

// input is what the matchers see of one request. It lives on the stack of
// the entrypoint handler; building it allocates only when the host has
// upper-case letters or the path has percent-escapes.
type input struct {
	r    *http.Request
	host string // canonical host, see canonicalHost
	dot  bool   // the request's host ended with a dot (trimmed from host)
	path string // routing path, see routingPath
}

func newInput(r *http.Request) input {
	h := canonicalHost(r.Host)
	return input{r: r, host: h, dot: h != "" && hostHasDot(r.Host), path: routingPath(r)}
}

// hostHasDot reports whether the host part of a Host header (port removed)
// ends with a dot: "x.example.com.:8080".
func hostHasDot(h string) bool {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	return strings.HasSuffix(h, ".")
}

// regexpHost is the host HostRegexp sees: lower-cased and without its port,
// as for Host, but with a trailing dot kept — Traefik matches the pattern
// against its canonized host (lower-cased, port removed, dot kept), so
// `^[a-z.]+\.example\.com$` does not match "a.example.com." (case 005).
func (in *input) regexpHost() string {
	if in.dot {
		return in.host + "."
	}
	return in.host
}

// canonicalHost returns h lower-cased, without its port and without one
// trailing dot: "WWW.Example.COM.:8080" becomes "www.example.com", and
// "[::1]:80" becomes "::1" (Traefik requestdecorator.GetCanonizedHost plus
// its trailing-dot rule). It allocates only when h has upper-case letters.
func canonicalHost(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.IndexByte(h, ':'); i >= 0 && strings.IndexByte(h[i+1:], ':') < 0 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// reserved reports whether the escape %XY (hi = X, lo = Y, any case) stands
// for an RFC 3986 §2.2 reserved character or '%', which routing keeps
// encoded so that Path(`/a/b`) does not match /a%2Fb.
func reserved(hi, lo byte) bool {
	hi, lo = upper(hi), upper(lo)
	switch hi {
	case '2':
		// ! # $ % & ' ( ) * + , /  =  21 23 24 25 26 27 28 29 2A 2B 2C 2F
		return strings.IndexByte("13456789ABCF", lo) >= 0
	case '3':
		// : ; = ?  =  3A 3B 3D 3F
		return strings.IndexByte("ABDF", lo) >= 0
	case '4':
		return lo == '0' // @
	case '5':
		return lo == 'B' || lo == 'D' // [ ]
	}
	return false
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// routingPath returns the path the path matchers see: the escaped request
// path with every percent-escape decoded except those of reserved
// characters, which stay as sent ("/a%2Fb%20c" routes as "/a%2Fb c").
// Source: Traefik pkg/muxer/http/mux.go withRoutingPath. It allocates only
// when the path contains '%'. url.URL.EscapedPath never yields a malformed
// escape (it re-escapes Path when RawPath does not decode), so unlike
// Traefik there is no error case; a stray '%' would be kept as is.
func routingPath(r *http.Request) string {
	if r.URL == nil {
		return ""
	}
	p := r.URL.EscapedPath()
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(p) {
			b.WriteByte(c)
			continue
		}
		hi, ok1 := ascii.Unhex(p[i+1])
		lo, ok2 := ascii.Unhex(p[i+2])
		if !ok1 || !ok2 {
			b.WriteByte(c)
			continue
		}
		if reserved(p[i+1], p[i+2]) {
			b.WriteString(p[i : i+3])
		} else {
			b.WriteByte(hi<<4 | lo)
		}
		i += 2
	}
	return b.String()
}

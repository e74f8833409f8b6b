package router

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/gantry-proxy/gantry/internal/ascii"
)

// queryMatch reports whether the raw query has a parameter whose decoded
// key is key and whose decoded value is want (or matches re when re is
// set, or anything when anyValue). Decoding and the skipping of malformed
// pairs follow url.ParseQuery, which Traefik's Query matcher uses; unlike
// it, this allocates nothing unless re is set and the value has escapes.
func queryMatch(raw, key, want string, re *regexp.Regexp, anyValue bool) bool {
	for raw != "" {
		var seg string
		seg, raw, _ = strings.Cut(raw, "&")
		if seg == "" || strings.IndexByte(seg, ';') >= 0 {
			continue
		}
		k, v, _ := strings.Cut(seg, "=")
		if !validEscapes(k) || !validEscapes(v) || !unescapedEqual(k, key) {
			continue
		}
		switch {
		case anyValue:
			return true
		case re != nil:
			if strings.ContainsAny(v, "%+") {
				v, _ = url.QueryUnescape(v)
			}
			if re.MatchString(v) {
				return true
			}
		case unescapedEqual(v, want):
			return true
		}
	}
	return false
}

// validEscapes reports whether every '%' in s starts a two-digit hex escape.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) {
			return false
		}
		if _, ok := ascii.Unhex(s[i+1]); !ok {
			return false
		}
		if _, ok := ascii.Unhex(s[i+2]); !ok {
			return false
		}
		i += 2
	}
	return true
}

// unescapedEqual reports whether query-unescaping raw ('+' is a space,
// %XY a byte) gives want. raw must have valid escapes.
func unescapedEqual(raw, want string) bool {
	j := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '+':
			c = ' '
		case '%':
			hi, _ := ascii.Unhex(raw[i+1])
			lo, _ := ascii.Unhex(raw[i+2])
			c = hi<<4 | lo
			i += 2
		}
		if j >= len(want) || want[j] != c {
			return false
		}
		j++
	}
	return j == len(want)
}

package balance

import (
	"crypto/sha1" //nolint:gosec // Traefik's cookie-name derivation, not a security use
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Sticky sessions (loadBalancer.sticky.cookie and weighted.sticky.cookie),
// as Traefik v3 has them (pkg/server/service/loadbalancer/sticky.go,
// pkg/server/cookie):
//
//   - a request without the cookie, or whose cookie names no server of the
//     service, a server with weight 0, or one without an available server,
//     is balanced as usual and gets a new cookie naming the pick;
//   - a cookie naming an available server sends the request there and is
//     not set again;
//   - the value is the first 16 hex digits of the SHA-256 of the server URL
//     as configured (of the child service name for weighted), so a cookie
//     Traefik set stays valid; Traefik's older FNV values (and the raw
//     URL) are accepted and rewritten to the current form;
//   - the name defaults to Traefik's: "_" and the first 5 hex digits of
//     the SHA-1 of "_TRAEFIK_BACKEND_" + the service name; a configured
//     name has characters outside RFC 2616 tokens replaced by "_";
//   - attributes: path (default "/"), domain, maxAge (seconds; negative
//     expires the cookie at once, 0 is a session cookie), secure, httpOnly,
//     sameSite (none, lax, strict; anything else leaves the attribute out).
//
// Two levels: a weighted service with sticky pins the child service, and
// a child loadBalancer with its own sticky pins the server; each has its
// own cookie (default names differ by service), both are set on the first
// answer and both are honoured.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/load-balancing/service/#sticky-sessions

// Sticky pins a client to one server of a load balancer.
type Sticky struct {
	cookie  http.Cookie // template: name and attributes
	servers []*Server
	byHash  map[string]int
	compat  map[string]int // legacy values, answered with a new cookie
	hashes  []string
}

// NewSticky builds the cookie of service over its servers with weight > 0,
// raw[i] giving the URL of servers[i] as configured ("": servers[i].URL).
// c is the template (CookieTemplate); its name defaults as Traefik's.
func NewSticky(service string, c http.Cookie, servers []*Server, raw []string) *Sticky {
	c.Name = cookieName(c.Name, service)
	s := &Sticky{cookie: c, servers: servers, byHash: map[string]int{}, compat: map[string]int{}, hashes: make([]string, len(servers))}
	for i, srv := range servers {
		u := raw[i]
		if u == "" {
			u = srv.URL.String()
		}
		h := stickyHash(u)
		s.byHash[h] = i
		s.hashes[i] = h
		f := fnvHash(u)
		s.compat[u], s.compat[f], s.compat[fnvHash(f)] = i, i, i
	}
	return s
}

// Lookup returns the index of the available server the request's cookie
// names, or -1, and whether the cookie must be rewritten (a legacy value).
func (s *Sticky) Lookup(r *http.Request) (int, bool) {
	c, err := r.Cookie(s.cookie.Name)
	if err != nil {
		return -1, false
	}
	i, ok := s.byHash[c.Value]
	rewrite := false
	if !ok {
		i, ok = s.compat[c.Value]
		rewrite = true
	}
	if ok && s.servers[i].Weight > 0 && s.servers[i].Available() {
		return i, rewrite
	}
	return -1, false
}

// Set pins the client to server i, replacing a cookie of ours a retry
// already set.
func (s *Sticky) Set(w http.ResponseWriter, i int) {
	setCookie(w, s.cookie, s.hashes[i])
}

func setCookie(w http.ResponseWriter, tmpl http.Cookie, value string) {
	prefix := tmpl.Name + "="
	w.Header()["Set-Cookie"] = slices.DeleteFunc(w.Header()["Set-Cookie"], func(v string) bool { return strings.HasPrefix(v, prefix) })
	tmpl.Value = value
	http.SetCookie(w, &tmpl)
}

// ChildSticky pins a client to one child of a weighted service.
type ChildSticky struct {
	cookie http.Cookie
	byHash map[string]int
	compat map[string]int
	hashes []string
}

// NewChildSticky builds the cookie of weighted service over its children;
// children of weight 0 are never pinned.
func NewChildSticky(service string, c http.Cookie, children []config.WRRService) *ChildSticky {
	c.Name = cookieName(c.Name, service)
	cc := &ChildSticky{cookie: c, byHash: map[string]int{}, compat: map[string]int{}}
	for i, ch := range children {
		h := stickyHash(ch.Name)
		cc.hashes = append(cc.hashes, h)
		if ch.Weight != nil && *ch.Weight <= 0 {
			continue
		}
		cc.byHash[h] = i
		f := fnvHash(ch.Name)
		cc.compat[ch.Name], cc.compat[f], cc.compat[fnvHash(f)] = i, i, i
	}
	return cc
}

// Lookup returns the child index the cookie names (-1: none) and whether
// the cookie must be rewritten.
func (c *ChildSticky) Lookup(r *http.Request) (int, bool) {
	ck, err := r.Cookie(c.cookie.Name)
	if err != nil {
		return -1, false
	}
	if i, ok := c.byHash[ck.Value]; ok {
		return i, false
	}
	if i, ok := c.compat[ck.Value]; ok {
		return i, true
	}
	return -1, false
}

// Set pins the client to child i.
func (c *ChildSticky) Set(w http.ResponseWriter, i int) { setCookie(w, c.cookie, c.hashes[i]) }

// stickyHash is Traefik's cookie value: SHA-256, 16 hex digits.
func stickyHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// fnvHash is Traefik's legacy cookie value (FNV-64, hex).
func fnvHash(s string) string {
	h := fnv.New64()
	_, _ = h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

// cookieName is Traefik's cookie.GetName: the configured name sanitised,
// or one derived from the service name.
func cookieName(name, service string) string {
	if name != "" {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("!#$%&'*+-.^`|~", r):
				return r
			}
			return '_'
		}, name)
	}
	sum := sha1.Sum([]byte("_TRAEFIK_BACKEND_" + service)) //nolint:gosec // see import
	return fmt.Sprintf("_%x", sum)[:6]
}

// CookieTemplate converts the sticky cookie options: path defaults to
// "/", sameSite other than none, lax or strict leaves the attribute out.
func CookieTemplate(c *config.Cookie) http.Cookie {
	hc := http.Cookie{Name: c.Name, Secure: c.Secure, HttpOnly: c.HTTPOnly, MaxAge: c.MaxAge, Domain: c.Domain, Path: "/"}
	if c.Path != nil {
		hc.Path = *c.Path
	}
	hc.SameSite = sameSiteByName[strings.ToLower(c.SameSite)] // unknown: unset
	return hc
}

// sameSiteByName maps the cookie's sameSite option (lower-cased) to the
// attribute; any other value leaves it unset.
var sameSiteByName = map[string]http.SameSite{
	"none": http.SameSiteNoneMode, "lax": http.SameSiteLaxMode, "strict": http.SameSiteStrictMode,
}

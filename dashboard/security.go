package dashboard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router/rule"
)

// InternalProvider is the provider name of Gantry's own routers (the
// api.insecure router, /metrics, /ping); names "x@internal".
const InternalProvider = "internal"

// APIService is the internal service name routers point at to reach the API.
const APIService = "api@internal"

// security applies reliability.md F13 to every API request:
//
//  1. Host check: the Host header must name loopback (localhost,
//     127.0.0.1, ::1), one of api.allowedHosts, or a host that a user
//     router to api@internal matches with Host(…). It is skipped when
//     api.insecure is on and api.allowedHosts is empty (the user opted in
//     to serving every host), or when a user router reaches api@internal
//     without any Host matcher. A mismatch answers 403 (DNS rebinding).
//  2. Basic auth when api.users or api.usersFile is set (htpasswd lines:
//     bcrypt, SHA1, APR1/MD5); failure answers 401 with a challenge.
//  3. Go's http.CrossOriginProtection: cross-origin non-safe requests
//     (POST /api/simulate from another site) answer 403.
//
// The WebSocket Origin check is in ws.go (upgrades with a foreign or
// "null" Origin answer 403).
type security struct {
	insecure bool
	allowed  map[string]bool
	auth     middleware.Middleware // nil: no auth
	cop      *http.CrossOriginProtection
	tables   Tables

	mu        sync.Mutex
	cacheVer  string
	cacheAny  bool
	cacheHost map[string]bool
}

func newSecurity(c *static.API, tables Tables) (*security, error) {
	s := &security{allowed: map[string]bool{}, cop: http.NewCrossOriginProtection(), tables: tables}
	if c == nil {
		return s, nil
	}
	s.insecure = c.Insecure
	for _, h := range c.AllowedHosts {
		s.allowed[normHost(h)] = true
	}
	if len(c.Users) > 0 || c.UsersFile != "" {
		mw, err := middleware.New(context.Background(), APIService, &config.Middleware{BasicAuth: &config.BasicAuth{
			Users: c.Users, UsersFile: c.UsersFile, Realm: "gantry", RemoveHeader: true,
		}}, nil)
		if err != nil {
			return nil, fmt.Errorf("dashboard: api.users/api.usersFile: %w", err)
		}
		s.auth = mw
	}
	return s, nil
}

func (s *security) wrap(h http.Handler) http.Handler {
	inner := s.cop.Handler(h)
	if s.auth != nil {
		inner = s.auth(inner)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("host %q is not allowed for the API (add it to api.allowedHosts)", r.Host))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		inner.ServeHTTP(w, r)
	})
}

func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	return h
}

func isLoopback(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (s *security) hostAllowed(hostHeader string) bool {
	h := normHost(hostHeader)
	if isLoopback(h) || s.allowed[h] {
		return true
	}
	if s.insecure && len(s.allowed) == 0 {
		return true
	}
	anyHost, hosts := s.routerHosts()
	return anyHost || hosts[h]
}

// routerHosts returns the hosts user routers to api@internal match, cached
// per table version; anyHost is true when one of them has no Host matcher.
func (s *security) routerHosts() (anyHost bool, hosts map[string]bool) {
	if s.tables == nil {
		return false, nil
	}
	t := s.tables.Current()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Version() == s.cacheVer && s.cacheHost != nil {
		return s.cacheAny, s.cacheHost
	}
	s.cacheVer, s.cacheAny, s.cacheHost = t.Version(), false, map[string]bool{}
	m := t.Merged()
	if m == nil || m.Config == nil || m.Config.HTTP == nil {
		return false, s.cacheHost
	}
	for name, r := range m.Config.HTTP.Routers {
		if r == nil || r.Service != APIService || providers.ProviderOf(name) == InternalProvider {
			continue
		}
		tree, err := rule.Parse(r.Rule)
		if err != nil {
			continue // a router whose rule does not parse is disabled: it serves nothing
		}
		found := false
		walkHosts(tree, func(h string) {
			found = true
			s.cacheHost[normHost(h)] = true
		})
		if !found {
			s.cacheAny = true
		}
	}
	return s.cacheAny, s.cacheHost
}

// walkHosts calls f for each literal argument of Host (and v2's multi-arg
// Host) in t, skipping negated subtrees.
func walkHosts(t *rule.Tree, f func(string)) {
	if t == nil {
		return
	}
	switch t.Op {
	case rule.Not:
		return
	case rule.Call:
		if strings.EqualFold(t.Name, "Host") {
			for _, a := range t.Args {
				f(a)
			}
		}
		return
	}
	walkHosts(t.Left, f)
	walkHosts(t.Right, f)
}

// originAllowed is the WebSocket upgrade check: no Origin (non-browser
// clients) is allowed; "null" is refused; otherwise the Origin's host must
// equal the request's Host or be an allowed API host.
func (s *security) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	h := normHost(u.Host)
	return s.allowed[h]
}

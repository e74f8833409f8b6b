package dashboard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/middleware"
	"github.com/gantry-proxy/gantry/providers"
)

// InternalProvider is the provider name of Gantry's own routers (the
// api.insecure router, /metrics, /ping); names "x@internal".
const InternalProvider = "internal"

// APIService is the internal service name routers point at to reach the API.
const APIService = "api@internal"

// security applies reliability.md F13 to every API request:
//
//  1. Host check (DNS rebinding): the Host header must name loopback
//     (localhost, *.localhost, 127.0.0.0/8, ::1), an IP address the API's
//     entrypoint ("traefik") is bound to (every address of this machine
//     when it is bound to all, ":8080"), one of api.allowedHosts, or a
//     host that a user router to api@internal matches with Host(…) or
//     HostRegexp(…). A name that resolves to this machine is not enough:
//     that is what a rebinding attack makes a name do. The check is
//     skipped only when a user router reaches api@internal without
//     constraining the host (e.g. PathPrefix only, or Host(…) ||
//     PathPrefix(…)). A mismatch answers 403. Caddy's admin endpoint
//     checks Host the same way
//     (https://caddyserver.com/docs/json/admin/#origins). Unlike Traefik,
//     api.insecure alone does not serve every Host.
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
	boundIPs map[string]bool       // IP literals that name the API's listener
	auth     middleware.Middleware // nil: no auth
	cop      *http.CrossOriginProtection
	tables   Tables

	mu        sync.Mutex
	cacheVer  string
	cacheAny  bool
	cacheHost map[string]bool
	cacheRE   []*regexp.Regexp
}

// apiEntryPoint is the entrypoint api.insecure serves the API on.
const apiEntryPoint = "traefik"

// newSecurity returns the checks for c; listen is the address of the API's
// entrypoint ("" when unknown: only loopback IPs are then bound IPs).
func newSecurity(c *static.API, listen string, tables Tables) (*security, error) {
	s := &security{allowed: map[string]bool{}, boundIPs: boundIPs(listen), cop: http.NewCrossOriginProtection(), tables: tables}
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
	if isLoopback(h) || s.allowed[h] || s.boundIPs[h] {
		return true
	}
	anyHost, hosts, patterns := s.routerHosts()
	if anyHost || hosts[h] {
		return true
	}
	for _, re := range patterns {
		if re.MatchString(h) {
			return true
		}
	}
	return false
}

// routerHosts returns the hosts user routers to api@internal match, cached
// per table version: literal Host names and HostRegexp patterns. anyHost
// is true when one of those rules lets some request through whatever its
// host (no Host matcher on some branch of an ||).
func (s *security) routerHosts() (anyHost bool, hosts map[string]bool, patterns []*regexp.Regexp) {
	if s.tables == nil {
		return false, nil, nil
	}
	t := s.tables.Current()
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.Version() == s.cacheVer && s.cacheHost != nil {
		return s.cacheAny, s.cacheHost, s.cacheRE
	}
	s.cacheVer, s.cacheAny, s.cacheHost, s.cacheRE = t.Version(), false, map[string]bool{}, nil
	m := t.Merged()
	if m == nil || m.Config == nil || m.Config.HTTP == nil {
		return false, s.cacheHost, nil
	}
	for name, r := range m.Config.HTTP.Routers {
		if r == nil || r.Service != APIService || providers.ProviderOf(name) == InternalProvider {
			continue
		}
		tree, err := rule.Parse(r.Rule)
		if err != nil {
			continue // a router whose rule does not parse is disabled: it serves nothing
		}
		if !hostConstrained(tree) {
			s.cacheAny = true
		}
		walkHosts(tree, func(fn, arg string) {
			if strings.EqualFold(fn, "Host") {
				s.cacheHost[normHost(arg)] = true
			} else if re, err := regexp.Compile(arg); err == nil {
				s.cacheRE = append(s.cacheRE, re)
			}
		})
	}
	return s.cacheAny, s.cacheHost, s.cacheRE
}

func isHostMatcher(name string) bool {
	return strings.EqualFold(name, "Host") || strings.EqualFold(name, "HostRegexp")
}

// hostConstrained reports whether every request t matches must carry a
// host named by a Host or HostRegexp matcher in t.
func hostConstrained(t *rule.Tree) bool {
	switch t.Op {
	case rule.Call:
		return isHostMatcher(t.Name)
	case rule.And:
		return hostConstrained(t.Left) || hostConstrained(t.Right)
	case rule.Or:
		return hostConstrained(t.Left) && hostConstrained(t.Right)
	}
	return false // Not: matches every host but one
}

// walkHosts calls f for each argument of Host and HostRegexp in t,
// skipping negated subtrees.
func walkHosts(t *rule.Tree, f func(fn, arg string)) {
	if t == nil {
		return
	}
	switch t.Op {
	case rule.Not:
		return
	case rule.Call:
		if isHostMatcher(t.Name) {
			for _, a := range t.Args {
				f(t.Name, a)
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

// boundIPs returns the IP literals (normalised as normHost does) that can
// name a listener on addr: its IP, or every address of this machine's
// interfaces when addr binds all (":8080", "0.0.0.0:8080", "[::]:8080").
func boundIPs(addr string) map[string]bool {
	out := map[string]bool{}
	host, _, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimSuffix(addr, "/tcp"), "/udp"))
	if err != nil {
		return out
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		out[ip.String()] = true
		return out
	}
	if host != "" && net.ParseIP(host) == nil {
		return out // a host name: only loopback and api.allowedHosts
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out[n.IP.String()] = true
		}
	}
	return out
}

// exposureWarning is logged at start when the API listens beyond loopback
// with api.insecure and no api.allowedHosts: only IP literals and loopback
// names reach it then, and anyone who can reach the port can use it.
func (s *security) exposureWarning(listen string) string {
	if !s.insecure || len(s.allowed) > 0 {
		return ""
	}
	host, _, err := net.SplitHostPort(strings.TrimSuffix(listen, "/tcp"))
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return ""
	}
	limit := fmt.Sprintf("bind entryPoints.%s.address to 127.0.0.1 unless the network is trusted", apiEntryPoint)
	if inContainer() {
		// 127.0.0.1 inside a container is unreachable from its published
		// port (issue 23: the shipped docker-compose.yml got this advice).
		limit = "publish its port on the host's loopback only (ports: \"127.0.0.1:8080:8080\"), not on every interface, unless the network is trusted"
	}
	return fmt.Sprintf("api.insecure: the API listens on %s, beyond loopback, without authentication; it answers requests whose Host is a loopback name or an IP address of this listener only (DNS rebinding protection); set api.allowedHosts to reach it by name, and %s", listen, limit)
}

// containerMarkers are files a container runtime creates in its containers
// (Docker, Podman).
var containerMarkers = []string{"/.dockerenv", "/run/.containerenv"}

// inContainer reports whether Gantry runs in a container.
func inContainer() bool {
	for _, f := range containerMarkers {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

package router

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// DefaultTLSOptions is the name of the TLS options a router without
// tls.options asks for (tls.options.default, or the built-in default).
const DefaultTLSOptions = "default"

// TLSHosts maps an entrypoint name to the TLS options each SNI host name
// of that entrypoint uses: host (lower-cased, "*.example.com" for a
// wildcard Host) → tls.options name. Compile derives it from the HTTPS
// routers' Host matchers (resolveTLS) and hands it to BuildTLS; a name not
// listed uses "default".
type TLSHosts map[string]map[string]string

// TLSOptionsError is an error BuildTLS returns for a tls.options set that
// cannot be built (an unknown cipher suite, an unreadable CA file) or that
// a router names but the configuration lacks (Missing). Handshakes for the
// hosts that use it must fail (the builder sees to that); Compile disables
// the routers resolved to it, naming the options.
type TLSOptionsError struct {
	Name    string
	Missing bool
	Err     error
}

// Error renders "tls.options.<name>: <cause>".
func (e *TLSOptionsError) Error() string { return fmt.Sprintf("tls.options.%s: %v", e.Name, e.Err) }

// Unwrap returns the cause.
func (e *TLSOptionsError) Unwrap() error { return e.Err }

// TLSWarning is a problem BuildTLS reports that changes nothing it serves
// (a TLS 1.3 suite in cipherSuites, which Go does not let one choose): it
// is listed in Report.TLSWarnings.
type TLSWarning struct{ Err error }

// Error returns the cause's text.
func (w *TLSWarning) Error() string { return w.Err.Error() }

// misdirected answers 421 (RFC 9110 §15.5.20): the client should retry
// on a new connection, whose SNI then selects the right TLS options.
var misdirected = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, http.StatusText(http.StatusMisdirectedRequest), http.StatusMisdirectedRequest)
})

// misdirected reports whether a TLS request must be answered 421: its
// connection negotiated options neg, and rt (the route it matched, or nil)
// resolved to others; or no route matched and either the host's HTTPS
// routers use other options than neg, or a new connection with the host as
// SNI would be given to a TCP router of the entrypoint (a passthrough host
// reached over a connection Gantry terminated).
func (e *entryHandler) misdirected(r *http.Request, rt *route, in *input) bool {
	if e.negotiated == nil {
		return false
	}
	neg, ok := e.negotiated(r)
	if !ok {
		return false
	}
	if rt != nil {
		return rt.tlsOptions != neg
	}
	if in.host == "" {
		return false
	}
	if want, ok := hostOptions(e.tlsHosts, in.host); ok && want != neg {
		return true
	}
	if e.tcp != nil {
		cd := tcpmux.ConnData{ServerName: in.host}
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			cd.ClientIP = ap.Addr().Unmap()
		}
		if d, _ := e.tcp.Route(&cd, true); d == tcpmux.ToTCP {
			return true
		}
	}
	return false
}

// hostOptions returns the options of host in hosts: its exact entry, else
// the entry of the wildcard covering its first label.
func hostOptions(hosts map[string]string, host string) (string, bool) {
	if o, ok := hosts[host]; ok {
		return o, true
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		o, ok := hosts["*"+host[i:]]
		return o, ok
	}
	return "", false
}

// ruleHosts returns the lower-cased arguments of the Host matchers of an
// HTTP rule (either syntax), without a trailing dot: the SNI names an
// HTTPS router chooses TLS options for (Traefik ParseDomains).
func ruleHosts(src string) []string {
	t, err := rule.Parse(src)
	if err != nil {
		return nil
	}
	var out []string
	_ = t.Walk(func(c *rule.Tree) error {
		if strings.EqualFold(c.Name, "Host") {
			for _, a := range c.Args {
				out = append(out, strings.ToLower(strings.TrimSuffix(a, ".")))
			}
		}
		return nil
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// requestedTLSOptions is the tls.options name router r asks for.
func requestedTLSOptions(r *config.Router) string {
	if r == nil || r.TLS == nil || r.TLS.Options == "" {
		return DefaultTLSOptions
	}
	return r.TLS.Options
}

// resolveTLS decides, per entrypoint, the TLS options of each host and of
// each HTTPS route, as Traefik does (pkg/server/aggregator.go
// findConflictingRouters, pkg/server/router/tcp/manager.go):
//
//   - a route's hosts (its Host matchers) use the options it asks for;
//   - a route without a Host cannot choose options (they are chosen from
//     the SNI, before any request): asking for others than "default" is a
//     warning and it resolves to "default";
//   - routers asking for different options for one host on one
//     entrypoint conflict: every router of that host resolves to
//     "default", each with a warning naming the host and the others
//     (repeated until no host has two options, since a router with
//     several hosts moves all of them).
//
// Each placed HTTPS route is replaced by a copy holding its resolved
// options (per entrypoint).
func (c *compiler) resolveTLS(perEP map[string][]placed) TLSHosts {
	h := c.http()
	out := TLSHosts{}
	for _, ep := range slices.Sorted(maps.Keys(perEP)) {
		ps := perEP[ep]
		type claim struct {
			i     int
			name  string
			hosts []string
		}
		var claims []claim
		resolved := map[string]string{}
		for i, p := range ps {
			if !p.tls {
				continue
			}
			name := p.route.name
			want := requestedTLSOptions(h.Routers[name])
			hosts := ruleHosts(p.route.rule)
			if len(hosts) == 0 && want != DefaultTLSOptions {
				c.warnRouter(name, fmt.Sprintf("tls.options %q cannot be applied: the rule has no Host, and TLS options are chosen by the SNI before any request (the default options are used)", want))
				want = DefaultTLSOptions
			}
			resolved[name] = want
			claims = append(claims, claim{i: i, name: name, hosts: hosts})
		}
		for changed := true; changed; {
			changed = false
			byHost := map[string]map[string][]string{}
			for _, cl := range claims {
				for _, host := range cl.hosts {
					if byHost[host] == nil {
						byHost[host] = map[string][]string{}
					}
					byHost[host][resolved[cl.name]] = append(byHost[host][resolved[cl.name]], cl.name)
				}
			}
			for _, host := range slices.Sorted(maps.Keys(byHost)) {
				groups := byHost[host]
				if len(groups) < 2 {
					continue
				}
				var all []string
				for _, o := range slices.Sorted(maps.Keys(groups)) {
					for _, n := range groups[o] {
						all = append(all, fmt.Sprintf("%s (%s)", n, o))
					}
				}
				for _, names := range groups {
					for _, n := range names {
						c.warnRouter(n, fmt.Sprintf("routers ask for different TLS options for host %s on entrypoint %s: %s; all of them use the default options there", host, ep, strings.Join(all, ", ")))
						if resolved[n] != DefaultTLSOptions {
							resolved[n] = DefaultTLSOptions
							changed = true
						}
					}
				}
			}
		}
		hosts := map[string]string{}
		for _, cl := range claims {
			cp := *ps[cl.i].route
			cp.tlsOptions = resolved[cl.name]
			ps[cl.i].route = &cp
			for _, host := range cl.hosts {
				hosts[host] = cp.tlsOptions
			}
		}
		if len(hosts) > 0 {
			out[ep] = hosts
		}
	}
	return out
}

// warnRouter adds a warning to an enabled HTTP router's status, once.
func (c *compiler) warnRouter(name, msg string) { warnStatus(c.report.Routers, name, msg) }

// warnStatus adds a warning to the status of router name in report (HTTP,
// TCP or UDP routers), once; an enabled router is then a warning.
func warnStatus(report map[string]*RouterStatus, name, msg string) {
	st := report[name]
	if st == nil || slices.Contains(st.Errors, msg) {
		return
	}
	st.Errors = append(st.Errors, msg)
	if st.Status == StatusEnabled {
		st.Status = StatusWarning
	}
}

// dropBrokenTLS disables the HTTPS routes resolved to options BuildTLS
// could not build (or that do not exist), removing them from perEP; their
// hosts keep those options, so handshakes for them fail (fail closed,
// as Traefik's closing route for broken options).
func (c *compiler) dropBrokenTLS(perEP map[string][]placed, broken map[string]*TLSOptionsError) {
	if len(broken) == 0 {
		return
	}
	for ep, ps := range perEP {
		perEP[ep] = slices.DeleteFunc(ps, func(p placed) bool {
			oe := broken[p.route.tlsOptions]
			if !p.tls || oe == nil {
				return false
			}
			st := c.report.Routers[p.route.name]
			if st == nil {
				return true
			}
			msg := fmt.Sprintf("tls.options %q cannot be built (%v): TLS handshakes for the router's hosts fail", oe.Name, oe.Err)
			if oe.Missing {
				msg = fmt.Sprintf("tls.options %q does not exist: TLS handshakes for the router's hosts fail", oe.Name)
			}
			if !slices.Contains(st.Errors, msg) {
				st.Errors = append(st.Errors, msg)
			}
			st.Status = StatusDisabled
			return true
		})
	}
}

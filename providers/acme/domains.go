package acme

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
	"github.com/gantry-proxy/gantry/providers"
)

// want is one certificate some configuration needs from a resolver.
type want struct {
	resolver string
	domain   config.Domain // Main first; SANs sorted, without duplicates
	users    []string      // "router web@docker", "tls.stores.default.defaultGeneratedCert"
}

// key identifies a certificate request: resolver and the domain set.
func (w *want) key() string { return domainKey(w.resolver, w.domain) }

// The names are sorted: two routers asking for the same names in another
// order share one certificate (one order, not two).
func domainKey(resolver string, d config.Domain) string {
	return resolver + "|" + strings.Join(slices.Sorted(slices.Values(domainNames(d))), ",")
}

// names returns Main then the SANs.
func domainNames(d config.Domain) []string { return append([]string{d.Main}, d.SANs...) }

// wants derives the certificates m needs from resolvers, as Traefik does:
// for each HTTP router (and TCP router terminating TLS, with HostSNI in
// place of Host) whose tls.certResolver names a resolver, one
// certificate per tls.domains entry, or, without tls.domains, one
// certificate for all the names of the Host() matchers of its rule (the
// first is the main domain); plus tls.stores.default.defaultGeneratedCert.
// Duplicate names and names covered by a wildcard of the same entry are
// dropped (Traefik's deleteUnnecessaryDomains). Problems name the router
// and what is wrong (unknown resolver, a wildcard without DNS-01, a rule
// with no Host, an IP address).
func (m *Manager) wants(c *config.Configuration) (map[string]*want, []providers.Problem) {
	out := map[string]*want{}
	var probs []providers.Problem
	problem := func(src, msg string) {
		probs = append(probs, providers.Problem{Provider: Name, Source: src, Message: msg, Severity: providers.SeverityError})
	}
	add := func(user, res string, names []string) {
		r := m.resolvers[res]
		if err := m.skipped[res]; r == nil && err != nil {
			problem(user, fmt.Sprintf("certificate resolver %q was skipped (%v): the generated default certificate serves", res, err))
			return
		}
		if r == nil {
			problem(user, fmt.Sprintf("certificate resolver %q is not defined in certificatesResolvers (defined: %s)", res, strings.Join(slices.Sorted(maps.Keys(m.resolvers)), ", ")))
			return
		}
		d, err := normalize(names)
		if err != nil {
			problem(user, err.Error())
			return
		}
		if r.cfg.DNSChallenge == nil {
			for _, n := range domainNames(d) {
				if strings.HasPrefix(n, "*.") {
					problem(user, fmt.Sprintf("resolver %s: the wildcard %s needs the DNS-01 challenge (dnsChallenge)", res, n))
					return
				}
			}
		}
		w := &want{resolver: res, domain: d}
		if prev := out[w.key()]; prev != nil {
			w = prev
		}
		w.users = append(w.users, user)
		out[w.key()] = w
	}
	if c == nil {
		return out, nil
	}
	// router adds what one HTTP or TCP router ordering from resolver
	// needs: its tls.domains, else the hosts its rule names with matcher
	// (Host or HostSNI).
	router := func(user, resolver string, domains []config.Domain, matcher string, hosts func() []string) {
		if len(domains) > 0 {
			for _, d := range domains {
				add(user, resolver, domainNames(d))
			}
			return
		}
		h := hosts()
		if len(h) == 0 {
			problem(user, fmt.Sprintf("tls.certResolver %s: the rule names no %s() and tls.domains is empty: no certificate to order", resolver, matcher))
			return
		}
		add(user, resolver, h)
	}
	if c.HTTP != nil {
		for _, name := range slices.Sorted(maps.Keys(c.HTTP.Routers)) {
			r := c.HTTP.Routers[name]
			if r == nil || r.TLS == nil || r.TLS.CertResolver == "" {
				continue
			}
			router("router "+name, r.TLS.CertResolver, r.TLS.Domains, "Host", func() []string { return ruleHosts(r.Rule) })
		}
	}
	if c.TCP != nil {
		for _, name := range slices.Sorted(maps.Keys(c.TCP.Routers)) {
			r := c.TCP.Routers[name]
			if r == nil || r.TLS == nil || r.TLS.CertResolver == "" || r.TLS.Passthrough {
				continue
			}
			router("tcp router "+name, r.TLS.CertResolver, r.TLS.Domains, "HostSNI", func() []string {
				return slices.DeleteFunc(RuleCalls(r.Rule, "HostSNI"), func(h string) bool { return h == "*" })
			})
		}
	}
	if c.TLS != nil {
		if st := c.TLS.Stores[providers.DefaultTLSName]; st != nil && st.DefaultGeneratedCert != nil {
			g := st.DefaultGeneratedCert
			user := "tls.stores.default.defaultGeneratedCert"
			switch {
			case g.Resolver == "":
				problem(user, "resolver is empty")
			case g.Domain == nil || g.Domain.Main == "":
				problem(user, "domain.main is empty")
			default:
				add(user, g.Resolver, domainNames(*g.Domain))
			}
		}
	}
	return out, probs
}

// ruleHosts returns the lower-cased arguments of the Host() matchers of
// rule (Traefik's ParseDomains), in order, or nil when it does not parse.
func ruleHosts(expr string) []string { return RuleCalls(expr, "Host") }

// RuleCalls returns the lower-cased arguments of the fn() matchers of rule
// expr (Host for HTTP, HostSNI for TCP: Traefik's ParseDomains and
// ParseHostSNI), in order, or nil when it does not parse. The dashboard
// uses it for the hosts a certificate serves.
func RuleCalls(expr, fn string) []string {
	t, err := rule.Parse(expr)
	if err != nil {
		return nil
	}
	var hosts []string
	_ = t.Walk(func(c *rule.Tree) error {
		if strings.EqualFold(c.Name, fn) {
			for _, a := range c.Args {
				hosts = append(hosts, strings.ToLower(a))
			}
		}
		return nil
	})
	return hosts
}

// normalize lower-cases names, drops trailing dots, duplicates and names
// covered by a wildcard among them, and returns the first as Main and the
// rest sorted as SANs. IP addresses, empty names and a '*' anywhere but
// as a whole leftmost label are errors.
func normalize(names []string) (config.Domain, error) {
	var clean []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(n), "."))
		if n == "" {
			continue
		}
		if net.ParseIP(n) != nil {
			return config.Domain{}, fmt.Errorf("%s is an IP address: ACME certificates here are for DNS names", n)
		}
		if strings.Contains(strings.TrimPrefix(n, "*."), "*") {
			// Traefik's sanitizeDomains: "ACME does not allow '*.*'
			// wildcard domain"; RFC 8555 §7.1.3: a wildcard is the whole
			// leftmost label only. Refused here, never sent to the CA.
			return config.Domain{}, fmt.Errorf("%s: ACME allows a wildcard only as the whole leftmost label (*.example.com), never '*.*' or a '*' elsewhere: not ordered", n)
		}
		if !seen[n] {
			seen[n] = true
			clean = append(clean, n)
		}
	}
	if len(clean) == 0 {
		return config.Domain{}, fmt.Errorf("no domain name")
	}
	kept := clean[:0:0]
	for _, n := range clean {
		if i := strings.IndexByte(n, '.'); i > 0 && !strings.HasPrefix(n, "*.") && seen["*"+n[i:]] {
			continue // covered by the wildcard
		}
		kept = append(kept, n)
	}
	d := config.Domain{Main: kept[0]}
	d.SANs = slices.Sorted(slices.Values(kept[1:]))
	return d, nil
}

// covers reports whether a certificate for names serves host.
func covers(names []string, host string) bool {
	for _, n := range names {
		if n == host {
			return true
		}
		if strings.HasPrefix(n, "*.") {
			if i := strings.IndexByte(host, '.'); i > 0 && host[i:] == n[1:] {
				return true
			}
		}
	}
	return false
}

// UndefinedResolverProblems is what a configuration asks of resolvers when
// the static configuration defines none (no Manager runs): one problem per
// HTTP router, and TCP router terminating TLS, whose tls.certResolver
// names a resolver, since it is served the default certificate instead.
// Traefik logs "the router uses a nonexistent resolver" in this case.
func UndefinedResolverProblems(c *config.Configuration) []providers.Problem {
	var out []providers.Problem
	problem := func(user, res string) {
		out = append(out, providers.Problem{
			Provider: Name, Source: user, Severity: providers.SeverityError,
			Message: fmt.Sprintf("certificate resolver %q is not defined: the static configuration has no certificatesResolvers; the default certificate serves", res),
		})
	}
	if c == nil {
		return nil
	}
	if c.HTTP != nil {
		for _, name := range slices.Sorted(maps.Keys(c.HTTP.Routers)) {
			if r := c.HTTP.Routers[name]; r != nil && r.TLS != nil && r.TLS.CertResolver != "" {
				problem("router "+name, r.TLS.CertResolver)
			}
		}
	}
	if c.TCP != nil {
		for _, name := range slices.Sorted(maps.Keys(c.TCP.Routers)) {
			if r := c.TCP.Routers[name]; r != nil && r.TLS != nil && r.TLS.CertResolver != "" && !r.TLS.Passthrough {
				problem("tcp router "+name, r.TLS.CertResolver)
			}
		}
	}
	return out
}

package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// DefaultTLSName is the name of the TLS options and the TLS store that stay
// unqualified when merged, as in Traefik
// (https://doc.traefik.io/traefik/https/tls/#tls-options).
const DefaultTLSName = "default"

// Qualify returns name qualified with provider ("web" → "web@docker"). A
// name that already carries "@" (a cross-provider reference such as
// "auth@file", case 011) and the empty name are returned unchanged.
func Qualify(name, provider string) string {
	if name == "" || strings.Contains(name, "@") {
		return name
	}
	return name + "@" + provider
}

// ProviderOf returns the provider part of a qualified name ("web@docker" →
// "docker"), or "" when name is not qualified.
func ProviderOf(name string) string {
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// Merge merges one snapshot per provider (keyed by provider name) into a
// single configuration: every object is renamed "name@provider" and every
// reference without "@" is qualified with the referring provider (case 011).
// TLS certificates are concatenated in provider-name order; TLS options and
// stores named "default" keep their name, and when more than one provider
// defines one, it is left out and a Problem says so (Traefik's rule).
// Dynamic entrypoints are qualified too ("redis@docker"): the listener is
// named without the qualifier, and dataplane/entrypoints settles two
// providers asking for one name. The
// snapshots' Problems pass through, followed by Merge's own (object names
// containing "@").
//
// Merge does not modify the snapshots: objects it must change are copied.
// Version is set; Sources is left nil for the caller. The error is
// Hash's.
func Merge(snaps map[string]Snapshot) (*Merged, error) {
	out := config.New()
	m := &Merged{Config: out}
	var defOpts, defStores []string
	for _, pname := range slices.Sorted(maps.Keys(snaps)) {
		s := snaps[pname]
		m.Problems = append(m.Problems, s.Problems...)
		for k, v := range s.Origins {
			if m.Origins == nil {
				m.Origins = map[string]string{}
			}
			m.Origins[k+"@"+pname] = v
		}
		c := s.Config
		if c == nil {
			continue
		}
		bad := func(kind, name string) bool {
			if !strings.Contains(name, "@") {
				return false
			}
			m.Problems = append(m.Problems, Problem{
				Provider: pname, Source: kind + " " + name, Severity: SeverityError,
				Objects: []string{kind + " " + name},
				Message: fmt.Sprintf("%s name %q contains '@', which is reserved for provider qualification", kind, name),
			})
			return true
		}
		if h := c.HTTP; h != nil {
			qualifyInto(out.HTTP.Routers, h.Routers, "router", pname, bad, qualifyRouter)
			qualifyInto(out.HTTP.Services, h.Services, "service", pname, bad, qualifyService)
			qualifyInto(out.HTTP.Middlewares, h.Middlewares, "middleware", pname, bad, qualifyMiddleware)
			qualifyInto(out.HTTP.ServersTransports, h.ServersTransports, "serversTransport", pname, bad, nil)
		}
		if len(c.EntryPoints) > 0 {
			if out.EntryPoints == nil {
				out.EntryPoints = map[string]*config.DynamicEntryPoint{}
			}
			qualifyInto(out.EntryPoints, c.EntryPoints, "entrypoint", pname, bad, nil)
		}
		if !c.TCP.Empty() {
			t, o := c.TCP, out.EnsureTCP()
			qualifyInto(o.Routers, t.Routers, "tcpRouter", pname, bad, qualifyTCPRouter)
			qualifyInto(o.Services, t.Services, "tcpService", pname, bad, qualifyTCPService)
			qualifyInto(o.Middlewares, t.Middlewares, "tcpMiddleware", pname, bad, nil)
			qualifyInto(o.ServersTransports, t.ServersTransports, "tcpServersTransport", pname, bad, nil)
		}
		if !c.UDP.Empty() {
			u, o := c.UDP, out.EnsureUDP()
			qualifyInto(o.Routers, u.Routers, "udpRouter", pname, bad, qualifyUDPRouter)
			qualifyInto(o.Services, u.Services, "udpService", pname, bad, qualifyUDPService)
		}
		if t := c.TLS; t != nil {
			for _, cert := range t.Certificates {
				out.TLS.Certificates = append(out.TLS.Certificates, cert)
				m.TLSOrigins.Certificates = append(m.TLSOrigins.Certificates, pname)
			}
			qualifyTLSInto(out.TLS.Options, t.Options, "tlsOptions", pname, bad, &defOpts)
			qualifyTLSInto(out.TLS.Stores, t.Stores, "tlsStore", pname, bad, &defStores)
		}
	}
	if len(out.EntryPoints) == 0 {
		out.EntryPoints = nil
	}
	oneDefault(defOpts, out.TLS.Options, "options", &m.TLSOrigins.DefaultOptions, &m.Problems)
	oneDefault(defStores, out.TLS.Stores, "store", &m.TLSOrigins.DefaultStore, &m.Problems)
	v, err := VersionOf(out, m.Problems, m.Origins)
	if err != nil {
		return nil, err
	}
	m.Version = v
	return m, nil
}

// VersionOf is Hash(c) when there are no problems and no origins, else the
// hash of c, the problems and the origins (optional) together: a change in problems alone (a container that went
// from starting to unhealthy, a file that broke while its objects keep
// their last good content) is a new version, so it reaches the API, the
// dashboard and the store like any other change.
func VersionOf(c *config.Configuration, problems []Problem, origins ...map[string]string) (string, error) {
	if len(problems) == 0 && (len(origins) == 0 || len(origins[0]) == 0) {
		return Hash(c)
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	if err := enc.Encode(c); err != nil {
		return "", fmt.Errorf("providers: hash configuration: %w", err)
	}
	if err := enc.Encode(problems); err != nil {
		return "", fmt.Errorf("providers: hash problems: %w", err)
	}
	if len(origins) > 0 && len(origins[0]) > 0 {
		if err := enc.Encode(origins[0]); err != nil {
			return "", fmt.Errorf("providers: hash origins: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func multiDefault(what string, ps []string) Problem {
	return Problem{
		Provider: "aggregator", Source: "tls " + what + " default", Severity: SeverityError,
		Objects: []string{"tls" + what + " default"},
		Message: fmt.Sprintf("TLS %s %q defined by more than one provider (%s); none is used", what, DefaultTLSName, strings.Join(ps, ", ")),
	}
}

// qualifyInto adds the objects of src to dst named "name@p", each through
// q (nil: as it is); a name bad refuses (it holds "@") is left out.
func qualifyInto[T any](dst, src map[string]T, kind, p string, bad func(kind, name string) bool, q func(T, string) T) {
	for n, v := range src {
		if bad(kind, n) {
			continue
		}
		if q != nil {
			v = q(v, p)
		}
		dst[n+"@"+p] = v
	}
}

func qualifyAll(names []string, p string) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Qualify(n, p)
	}
	return out
}

// qualifyNames returns a copy of refs (weighted, HRW or mirror services)
// with each name (name: its field) qualified with p.
func qualifyNames[T any](refs []T, name func(*T) *string, p string) []T {
	out := slices.Clone(refs)
	for i := range out {
		*name(&out[i]) = Qualify(*name(&out[i]), p)
	}
	return out
}

func wrrName(w *config.WRRService) *string { return &w.Name }

// qualifyTLS returns tls (nil: nil) with its TLS options (options: their
// field) qualified with p, copied when they change; "default" stays.
func qualifyTLS[T any](tls *T, options func(*T) *string, p string) *T {
	if tls == nil {
		return nil
	}
	if o := *options(tls); o == "" || o == DefaultTLSName {
		return tls
	}
	c := *tls
	*options(&c) = Qualify(*options(tls), p)
	return &c
}

// qualifyTLSInto adds provider pname's TLS options or stores (kind) to
// out, named "<name>@<pname>", except "default", which keeps its name
// (the providers defining it are appended to defs); bad refuses a name
// with "@".
func qualifyTLSInto[V any](out, in map[string]V, kind, pname string, bad func(kind, name string) bool, defs *[]string) {
	for n, v := range in {
		if n == DefaultTLSName {
			*defs = append(*defs, pname)
			out[n] = v
		} else if !bad(kind, n) {
			out[n+"@"+pname] = v
		}
	}
}

// oneDefault settles the default TLS options or store (what) that the
// providers defs define: one provider's is used and recorded in origin;
// several are a Problem (multiDefault) and none of them is used.
func oneDefault[V any](defs []string, published map[string]V, what string, origin *string, problems *[]Problem) {
	switch {
	case len(defs) == 1:
		*origin = defs[0]
	case len(defs) > 1:
		delete(published, DefaultTLSName)
		*problems = append(*problems, multiDefault(what, defs))
	}
}

// qualified returns a copy of v (nil: nil) with edit's changes: how each
// object is copied before its references are qualified.
func qualified[T any](v *T, edit func(*T)) *T {
	if v == nil {
		return nil
	}
	c := *v
	edit(&c)
	return &c
}

func qualifyRouter(r *config.Router, p string) *config.Router {
	return qualified(r, func(c *config.Router) {
		c.Service = Qualify(c.Service, p)
		c.Middlewares = qualifyAll(c.Middlewares, p)
		c.ParentRefs = qualifyAll(c.ParentRefs, p)
		c.TLS = qualifyTLS(c.TLS, func(t *config.RouterTLSConfig) *string { return &t.Options }, p)
	})
}

func qualifyService(s *config.Service, p string) *config.Service {
	return qualified(s, func(c *config.Service) {
		c.Middlewares = qualifyAll(c.Middlewares, p)
		switch {
		case c.LoadBalancer != nil:
			c.LoadBalancer = qualified(c.LoadBalancer, func(lb *config.ServersLoadBalancer) {
				lb.ServersTransport = Qualify(lb.ServersTransport, p)
			})
		case c.HighestRandomWeight != nil:
			c.HighestRandomWeight = qualified(c.HighestRandomWeight, func(w *config.HighestRandomWeight) {
				w.Services = qualifyNames(w.Services, func(h *config.HRWService) *string { return &h.Name }, p)
			})
		case c.Weighted != nil:
			c.Weighted = qualified(c.Weighted, func(w *config.WeightedRoundRobin) { w.Services = qualifyNames(w.Services, wrrName, p) })
		case c.Mirroring != nil:
			c.Mirroring = qualified(c.Mirroring, func(m *config.Mirroring) {
				m.Service = Qualify(m.Service, p)
				m.Mirrors = qualifyNames(m.Mirrors, func(m *config.MirrorService) *string { return &m.Name }, p)
			})
		case c.Failover != nil:
			c.Failover = qualified(c.Failover, func(f *config.Failover) {
				f.Service = Qualify(f.Service, p)
				f.Fallback = Qualify(f.Fallback, p)
			})
		}
	})
}

func qualifyMiddleware(m *config.Middleware, p string) *config.Middleware {
	if m == nil || (m.Chain == nil && m.Errors == nil) {
		return m
	}
	c := *m
	if m.Chain != nil {
		ch := *m.Chain
		ch.Middlewares = qualifyAll(ch.Middlewares, p)
		c.Chain = &ch
	}
	if m.Errors != nil {
		e := *m.Errors
		e.Service = Qualify(e.Service, p)
		c.Errors = &e
	}
	return &c
}

// Hash returns the hex SHA-256 of the canonical JSON of c: encoding/json
// writes struct fields in declaration order and map keys sorted, and empty
// sections are omitted, so equal configurations hash equal. It fails only
// when c holds a value JSON cannot encode (such as a NaN in plugin options).
func Hash(c *config.Configuration) (string, error) {
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(c); err != nil {
		return "", fmt.Errorf("providers: hash configuration: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// UnionServers appends to dst the servers of src whose key (the URL of an
// HTTP server, the address of a TCP or UDP one) dst lacks, in src's order:
// how same-named load balancers of several containers or instances merge
// (Traefik's ServersLoadBalancer.Merge and its TCP/UDP twins).
func UnionServers[S any](dst, src []S, key func(S) string) []S {
	for _, s := range src {
		if !slices.ContainsFunc(dst, func(d S) bool { return key(d) == key(s) }) {
			dst = append(dst, s)
		}
	}
	return dst
}

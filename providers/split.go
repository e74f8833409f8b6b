package providers

import (
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// Split returns provider's part of m as a Snapshot, the inverse of Merge
// for one provider: the objects named "x@provider" renamed "x" (references
// inside stay qualified, which Merge leaves alone), the TLS certificates,
// default options and default store that TLSOrigins attributes to it, and
// the Problems it reported. Merging the Splits of every provider of m
// yields m's Config again.
func Split(m *Merged, provider string) Snapshot {
	out := config.New()
	s := Snapshot{Config: out}
	suffix := "@" + provider
	for _, p := range m.Problems {
		if p.Provider == provider {
			s.Problems = append(s.Problems, p)
		}
	}
	for k, v := range m.Origins {
		if name, ok := strings.CutSuffix(k, suffix); ok {
			if s.Origins == nil {
				s.Origins = map[string]string{}
			}
			s.Origins[name] = v
		}
	}
	c := m.Config
	if h := c.HTTP; h != nil {
		pick(out.HTTP.Routers, h.Routers, suffix)
		pick(out.HTTP.Services, h.Services, suffix)
		pick(out.HTTP.Middlewares, h.Middlewares, suffix)
		pick(out.HTTP.ServersTransports, h.ServersTransports, suffix)
	}
	splitTCP(out, c, suffix)
	for n, ep := range c.EntryPoints {
		if base, ok := strings.CutSuffix(n, suffix); ok {
			if out.EntryPoints == nil {
				out.EntryPoints = map[string]*config.DynamicEntryPoint{}
			}
			out.EntryPoints[base] = ep
		}
	}
	if t := c.TLS; t != nil {
		for i, cert := range t.Certificates {
			if i < len(m.TLSOrigins.Certificates) && m.TLSOrigins.Certificates[i] == provider {
				out.TLS.Certificates = append(out.TLS.Certificates, cert)
			}
		}
		pick(out.TLS.Options, t.Options, suffix)
		pick(out.TLS.Stores, t.Stores, suffix)
		if o, ok := t.Options[DefaultTLSName]; ok && m.TLSOrigins.DefaultOptions == provider {
			out.TLS.Options[DefaultTLSName] = o
		}
		if st, ok := t.Stores[DefaultTLSName]; ok && m.TLSOrigins.DefaultStore == provider {
			out.TLS.Stores[DefaultTLSName] = st
		}
	}
	return s
}

func pick[V any](dst, src map[string]V, suffix string) {
	for n, v := range src {
		if base, ok := strings.CutSuffix(n, suffix); ok {
			dst[base] = v
		}
	}
}

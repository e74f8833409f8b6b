package instance

import (
	"maps"
	"reflect"
	"slices"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// EntryPointTLS is entryPoints.<ep>.http.tls per entrypoint name (only
// those set).
type EntryPointTLS map[string]*config.RouterTLSConfig

// EntryPointTLSOf collects entryPoints.<ep>.http.tls of c.
func EntryPointTLSOf(c *static.Configuration) EntryPointTLS {
	out := EntryPointTLS{}
	for name, ep := range c.EntryPoints {
		if ep != nil && ep.HTTP != nil && ep.HTTP.TLS != nil {
			out[name] = ep.HTTP.TLS
		}
	}
	return out
}

// Apply returns m with entryPoints.<ep>.http.tls given to every HTTP
// router that has no tls section of its own, as Traefik does (a router's
// own tls replaces the entrypoint's entirely): a router whose entrypoints
// (explicit, else the default ones) all carry the same tls gets it; a
// router on entrypoints with different tls settings (or only some with
// tls) is split into one router per entrypoint, named "<entrypoint>-<name>"
// (Traefik's naming). m itself is not modified; without any entrypoint tls
// m is returned as is.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/http/tls/overview/
func (e EntryPointTLS) Apply(m *providers.Merged, eps []router.EntryPoint) *providers.Merged {
	if len(e) == 0 || m == nil || m.Config == nil || m.Config.HTTP == nil {
		return m
	}
	var defaults, all []string
	for _, ep := range eps {
		if ep.Dynamic {
			continue
		}
		all = append(all, ep.Name)
		if ep.AsDefault {
			defaults = append(defaults, ep.Name)
		}
	}
	if len(defaults) == 0 {
		defaults = all
	}
	routers := make(map[string]*config.Router, len(m.Config.HTTP.Routers))
	origins, cloned := m.Origins, false
	changed := false
	for _, name := range slices.Sorted(maps.Keys(m.Config.HTTP.Routers)) {
		r := m.Config.HTTP.Routers[name]
		if r == nil || r.TLS != nil {
			routers[name] = r
			continue
		}
		on := r.EntryPoints
		if len(on) == 0 {
			on = defaults
		}
		var first *config.RouterTLSConfig
		uniform, any := true, false
		for i, ep := range on {
			t := e[ep]
			any = any || t != nil
			if i == 0 {
				first = t
			} else if !reflect.DeepEqual(t, first) {
				uniform = false
			}
		}
		switch {
		case !any:
			routers[name] = r
		case uniform:
			cp := *r
			cp.TLS = cloneTLS(first)
			routers[name] = &cp
			changed = true
		default:
			for _, ep := range on {
				cp := *r
				cp.EntryPoints = []string{ep}
				cp.TLS = cloneTLS(e[ep])
				split := ep + "-" + name
				routers[split] = &cp
				if o, ok := m.Origins["router "+name]; ok {
					if !cloned {
						origins, cloned = maps.Clone(m.Origins), true
					}
					origins["router "+split] = o
				}
			}
			changed = true
		}
	}
	if !changed {
		return m
	}
	out := *m
	cfg := *m.Config
	h := *m.Config.HTTP
	h.Routers = routers
	cfg.HTTP = &h
	out.Config = &cfg
	out.Origins = origins
	return &out
}

func cloneTLS(t *config.RouterTLSConfig) *config.RouterTLSConfig {
	if t == nil {
		return nil
	}
	cp := *t
	cp.Domains = slices.Clone(t.Domains)
	return &cp
}

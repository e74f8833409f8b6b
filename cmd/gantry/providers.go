package main

import (
	"fmt"
	"log/slog"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/builtin"
	"github.com/gantry-proxy/gantry/providers/consul"
	"github.com/gantry-proxy/gantry/providers/docker"
	"github.com/gantry-proxy/gantry/providers/file"
	"github.com/gantry-proxy/gantry/providers/kubernetes/crd"
	"github.com/gantry-proxy/gantry/providers/kubernetes/gateway"
	kubeingress "github.com/gantry-proxy/gantry/providers/kubernetes/ingress"
	"github.com/gantry-proxy/gantry/providers/kubernetes/ingressnginx"
)

// providerKind is one providers.<kind> section: the name its provider runs
// under (its objects are "x@<name>") and how the provider is built from
// the static configuration (nil, nil when the section is not set).
type providerKind struct {
	kind, name string
	build      func(c *static.Configuration, log *slog.Logger) (providers.Provider, error)
}

// providerKinds are the providers.<kind> sections, in start order. Each
// provider package adds its line here.
var providerKinds = []providerKind{
	{"file", "file", fromSection(func(ps *static.Providers) *static.File { return ps.File }, file.New)},
	{"docker", "docker", fromSection(func(ps *static.Providers) *static.Docker { return ps.Docker }, docker.New)},
	{"consulCatalog", consul.CatalogName, fromSection(func(ps *static.Providers) *static.ConsulCatalog { return ps.ConsulCatalog }, consul.NewCatalog)},
	{"consul", consul.KVName, fromSection(func(ps *static.Providers) *static.ConsulKV { return ps.Consul }, consul.NewKV)},
	{"kubernetesIngress", kubeingress.ProviderName, fromSection(func(ps *static.Providers) *static.KubernetesIngress { return ps.KubernetesIngress }, kubeingress.New)},
	{"kubernetesCRD", crd.ProviderName, fromSection(func(ps *static.Providers) *static.KubernetesCRD { return ps.KubernetesCRD }, crd.New)},
	{"kubernetesIngressNGINX", ingressnginx.ProviderName, fromSection(func(ps *static.Providers) *static.KubernetesIngressNGINX { return ps.KubernetesIngressNGINX }, ingressnginx.New)},
	{"kubernetesGateway", gateway.ProviderName, func(c *static.Configuration, log *slog.Logger) (providers.Provider, error) {
		// The Gateway provider also reads the entrypoints (listeners).
		return fromSection(func(ps *static.Providers) *static.KubernetesGateway { return ps.KubernetesGateway },
			func(o static.KubernetesGateway, log *slog.Logger) (*gateway.Provider, error) {
				return gateway.New(o, c.EntryPoints, log)
			})(c, log)
	}},
}

// fromSection returns the build function of the section get selects: nil
// when it is not set, else the provider newP builds from it.
func fromSection[S any, P providers.Provider](get func(*static.Providers) *S, newP func(S, *slog.Logger) (P, error)) func(*static.Configuration, *slog.Logger) (providers.Provider, error) {
	return func(c *static.Configuration, log *slog.Logger) (providers.Provider, error) {
		o := get(c.Providers)
		if o == nil {
			return nil, nil
		}
		p, err := newP(*o, log)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// providerSet is what buildProviders returns: the providers to run, and
// the hook SIGHUP calls (the file provider's Reload, nil without one).
type providerSet struct {
	list       []providers.Provider
	fileReload func()
}

// buildProviders builds every provider the static configuration enables,
// always including the internal one. An error names the provider section
// and what is wrong with it.
func buildProviders(c *static.Configuration, log *slog.Logger) (*providerSet, error) {
	ps := &providerSet{list: []providers.Provider{builtin.New(c)}}
	for _, k := range providerKinds {
		p, reload, err := buildProvider(k.kind, c, log)
		if err != nil {
			return nil, err
		}
		if p != nil {
			ps.list = append(ps.list, p)
		}
		if reload != nil {
			ps.fileReload = reload
		}
	}
	return ps, nil
}

// buildProvider builds the provider of section providers.<kind> of c, or
// returns nil when that section is not set. reload is the provider's
// Reload (the file provider's: SIGHUP reads its files again). An error
// names the section ("providers.docker: ..."); the file provider's errors
// already do.
func buildProvider(kind string, c *static.Configuration, log *slog.Logger) (p providers.Provider, reload func(), err error) {
	if c.Providers == nil {
		return nil, nil, nil
	}
	for _, k := range providerKinds {
		if k.kind != kind {
			continue
		}
		p, err := k.build(c, log)
		switch {
		case err != nil && kind == "file":
			return nil, nil, err
		case err != nil:
			return nil, nil, fmt.Errorf("providers.%s: %w", kind, err)
		case p == nil:
			return nil, nil, nil
		}
		if r, ok := p.(interface{ Reload() }); ok {
			reload = r.Reload
		}
		return p, reload, nil
	}
	return nil, nil, fmt.Errorf("providers.%s: unknown provider", kind)
}

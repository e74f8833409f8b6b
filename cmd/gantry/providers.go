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

// providerKinds are the providers.<kind> sections, in start order, with
// the name each provider runs under (its objects are "x@<name>").
var providerKinds = []struct{ kind, name string }{
	{"file", "file"},
	{"docker", "docker"},
	{"consulCatalog", consul.CatalogName},
	{"consul", consul.KVName},
	{"kubernetesIngress", kubeingress.ProviderName},
	{"kubernetesCRD", crd.ProviderName},
	{"kubernetesIngressNGINX", ingressnginx.ProviderName},
	{"kubernetesGateway", gateway.ProviderName},
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
// returns nil when that section is not set. reload is the file provider's
// Reload. Each provider package adds its line here.
func buildProvider(kind string, c *static.Configuration, log *slog.Logger) (p providers.Provider, reload func(), err error) {
	ps := c.Providers
	if ps == nil {
		return nil, nil, nil
	}
	switch kind {
	case "file":
		if ps.File != nil {
			fp, err := file.New(*ps.File, log)
			if err != nil {
				return nil, nil, err
			}
			return fp, fp.Reload, nil
		}
	case "docker":
		if ps.Docker != nil {
			dp, err := docker.New(*ps.Docker, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.docker: %w", err)
			}
			return dp, nil, nil
		}
	case "consulCatalog":
		if ps.ConsulCatalog != nil {
			cp, err := consul.NewCatalog(*ps.ConsulCatalog, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.consulCatalog: %w", err)
			}
			return cp, nil, nil
		}
	case "consul":
		if ps.Consul != nil {
			kp, err := consul.NewKV(*ps.Consul, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.consul: %w", err)
			}
			return kp, nil, nil
		}
	case "kubernetesIngress":
		if ps.KubernetesIngress != nil {
			kp, err := kubeingress.New(*ps.KubernetesIngress, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.kubernetesIngress: %w", err)
			}
			return kp, nil, nil
		}
	case "kubernetesCRD":
		if ps.KubernetesCRD != nil {
			kp, err := crd.New(*ps.KubernetesCRD, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.kubernetesCRD: %w", err)
			}
			return kp, nil, nil
		}
	case "kubernetesIngressNGINX":
		if ps.KubernetesIngressNGINX != nil {
			np, err := ingressnginx.New(*ps.KubernetesIngressNGINX, log.With("provider", ingressnginx.ProviderName))
			if err != nil {
				return nil, nil, fmt.Errorf("providers.kubernetesIngressNGINX: %w", err)
			}
			return np, nil, nil
		}
	case "kubernetesGateway":
		if ps.KubernetesGateway != nil {
			gp, err := gateway.New(*ps.KubernetesGateway, c.EntryPoints, log)
			if err != nil {
				return nil, nil, fmt.Errorf("providers.kubernetesGateway: %w", err)
			}
			return gp, nil, nil
		}
	default:
		return nil, nil, fmt.Errorf("providers.%s: unknown provider", kind)
	}
	return nil, nil, nil
}

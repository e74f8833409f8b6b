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
)

// providerSet is what buildProviders returns: the providers to run, and
// the hooks SIGHUP calls (the file provider's Reload).
type providerSet struct {
	list    []providers.Provider
	reloads []func()
}

// buildProviders builds every provider the static configuration enables,
// always including the internal one. Each provider package adds its line
// here. An error names the provider section and what is wrong with it.
func buildProviders(c *static.Configuration, log *slog.Logger) (*providerSet, error) {
	ps := &providerSet{list: []providers.Provider{builtin.New(c)}}
	p := c.Providers
	if p == nil {
		return ps, nil
	}
	if p.File != nil {
		fp, err := file.New(*p.File, log)
		if err != nil {
			return nil, err
		}
		ps.list = append(ps.list, fp)
		ps.reloads = append(ps.reloads, fp.Reload)
	}
	if p.Docker != nil {
		dp, err := docker.New(*p.Docker, log)
		if err != nil {
			return nil, fmt.Errorf("providers.docker: %w", err)
		}
		ps.list = append(ps.list, dp)
	}
	if p.ConsulCatalog != nil {
		cp, err := consul.NewCatalog(*p.ConsulCatalog, log)
		if err != nil {
			return nil, fmt.Errorf("providers.consulCatalog: %w", err)
		}
		ps.list = append(ps.list, cp)
	}
	if p.Consul != nil {
		kp, err := consul.NewKV(*p.Consul, log)
		if err != nil {
			return nil, fmt.Errorf("providers.consul: %w", err)
		}
		ps.list = append(ps.list, kp)
	}
	return ps, nil
}

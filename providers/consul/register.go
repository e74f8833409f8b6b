package consul

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// Registration keeps this Gantry instance registered in a Consul agent
// (static cluster.consul) with a TTL check, so DNS and load balancers in
// front find live instances. Create it with NewRegistration; Run it; tell
// it each applied configuration version with SetVersion.
type Registration struct {
	log     *slog.Logger
	client  *api.Client
	svc     api.AgentServiceRegistration
	checkID string
	ttl     time.Duration

	mu      sync.Mutex
	version string
	changed chan struct{}
	state   providers.SourceState // of the last attempt, guarded by mu
}

// State is the registration's health for the API: "starting" before the
// first attempt, "ok" while the agent accepts it, "down" with the error
// while it does not (issue 23: an outage was only one log line).
func (r *Registration) State() providers.SourceState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state.State == "" {
		return providers.SourceState{State: providers.StateStarting}
	}
	return r.state
}

// NewRegistration checks c (serviceName, instanceID and port are required
// by then: the caller fills the defaults) and builds the Consul client.
func NewRegistration(c *static.Cluster, log *slog.Logger) (*Registration, error) {
	if c.InstanceID == "" || c.Port <= 0 || c.Port > 65535 {
		return nil, fmt.Errorf("cluster: instanceID and port are required")
	}
	cl, _, err := newClient(c.Consul)
	if err != nil {
		return nil, fmt.Errorf("cluster.consul: %w", err)
	}
	name := c.ServiceName
	if name == "" {
		name = "gantry"
	}
	ttl := 10 * time.Second
	if c.TTL > 0 {
		ttl = c.TTL.D()
	}
	if ttl < time.Second {
		return nil, fmt.Errorf("cluster.ttl %s: at least 1s", ttl)
	}
	dereg := time.Minute
	if c.DeregisterCriticalServiceAfter > 0 {
		dereg = c.DeregisterCriticalServiceAfter.D()
	}
	r := &Registration{log: log.With("component", "cluster"), client: cl, ttl: ttl, checkID: "gantry:" + c.InstanceID,
		changed: make(chan struct{}, 1)}
	r.svc = api.AgentServiceRegistration{
		ID: c.InstanceID, Name: name, Address: c.Address, Port: c.Port,
		Check: &api.AgentServiceCheck{CheckID: r.checkID, Name: "gantry alive", TTL: ttl.String(),
			DeregisterCriticalServiceAfter: dereg.String()},
	}
	return r, nil
}

// SetVersion records the configuration version the instance serves; the
// registration's meta follows it.
func (r *Registration) SetVersion(v string) {
	r.mu.Lock()
	r.version = v
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Run registers the instance, passes its TTL check every TTL/3 and
// re-registers when the version changes or the agent lost it; an agent
// that cannot be reached is retried at the same pace (logged once per
// outage). When ctx ends it deregisters (bounded by 2s) and returns nil.
func (r *Registration) Run(ctx context.Context) error {
	tick := time.NewTicker(r.ttl / 3)
	defer tick.Stop()
	registered, failing := "", false
	for {
		r.mu.Lock()
		v := r.version
		r.mu.Unlock()
		err := func() error {
			if registered != v || registered == "" {
				svc := r.svc
				svc.Meta = map[string]string{"configVersion": v}
				if err := r.client.Agent().ServiceRegisterOpts(&svc, api.ServiceRegisterOpts{}.WithContext(ctx)); err != nil {
					return fmt.Errorf("register: %w", err)
				}
				registered = v
			}
			if err := r.client.Agent().UpdateTTLOpts(r.checkID, "serving configuration "+v, api.HealthPassing, (&api.QueryOptions{}).WithContext(ctx)); err != nil {
				registered = "" // the agent may have lost the service (restarted): register again
				return fmt.Errorf("pass TTL check: %w", err)
			}
			return nil
		}()
		if ctx.Err() == nil {
			r.mu.Lock()
			if err != nil {
				r.state.State, r.state.LastError, r.state.LastErrorAt = providers.StateDown, err.Error(), time.Now()
			} else {
				r.state.State = providers.StateOK
			}
			r.mu.Unlock()
		}
		switch {
		case ctx.Err() != nil:
		case err != nil && !failing:
			r.log.Warn("consul registration failing; retrying", "error", err)
			failing = true
		case err == nil && failing:
			r.log.Info("consul registration restored", "id", r.svc.ID)
			failing = false
		case err == nil && registered != "" && v == registered:
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := r.client.Agent().ServiceDeregisterOpts(r.svc.ID, (&api.QueryOptions{}).WithContext(dctx)); err != nil {
				r.log.Warn("consul deregistration", "error", err)
			}
			return nil
		case <-tick.C:
		case <-r.changed:
		}
	}
}

// Instance is one registered Gantry instance as Consul sees it.
type Instance struct {
	ID            string `json:"id"`
	Address       string `json:"address"`
	Port          int    `json:"port"`
	ConfigVersion string `json:"configVersion"`
	Status        string `json:"status"` // passing, warning or critical
	Self          bool   `json:"self,omitempty"`
}

// ClusterStatus is every registered instance of the service, sorted by ID,
// and whether the passing ones serve the same configuration version.
type ClusterStatus struct {
	Service   string     `json:"service"`
	Instances []Instance `json:"instances"`
	Agree     bool       `json:"agree"`
}

// Status asks the agent for every instance of the service (passing or
// not).
func (r *Registration) Status(ctx context.Context) (*ClusterStatus, error) {
	entries, _, err := r.client.Health().Service(r.svc.Name, "", false, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("consul: instances of %s: %w", r.svc.Name, err)
	}
	cs := &ClusterStatus{Service: r.svc.Name, Instances: []Instance{}, Agree: true}
	version := ""
	for _, e := range entries {
		addr := e.Service.Address
		if addr == "" && e.Node != nil {
			addr = e.Node.Address
		}
		in := Instance{ID: e.Service.ID, Address: addr, Port: e.Service.Port, ConfigVersion: e.Service.Meta["configVersion"],
			Status: e.Checks.AggregatedStatus(), Self: e.Service.ID == r.svc.ID}
		if in.Status == api.HealthPassing {
			if version == "" {
				version = in.ConfigVersion
			} else if in.ConfigVersion != version {
				cs.Agree = false
			}
		}
		cs.Instances = append(cs.Instances, in)
	}
	slices.SortFunc(cs.Instances, func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
	return cs, nil
}

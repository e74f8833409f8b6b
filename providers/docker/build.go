package docker

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/providers"
)

// Compose labels that name a container's service (Traefik getServiceName).
const (
	labelComposeProject = "com.docker.compose.project"
	labelComposeService = "com.docker.compose.service"
)

// settings are the provider options build applies, plus what the watcher
// learned about the host for this build.
type settings struct {
	prefixes           []string
	exposedByDefault   bool
	network            string
	defaultRule        *template.Template
	constraints        matcher
	allowEmptyServices bool
	useBindPortIP      bool
	// selfID is Gantry's own container ID or its 12-character prefix (the
	// container's hostname); "" when Gantry does not run in a container.
	selfID string
	// hostIP is the address of the Docker host, for containers in network
	// mode host (host.docker.internal, host.containers.internal, else 127.0.0.1).
	hostIP string
}

// ruleData is the data of the defaultRule template (Traefik's model).
type ruleData struct {
	Name          string // the service name: compose "<service>_<project>" or the container name, normalized
	ContainerName string
	Labels        map[string]string
}

// piece is the configuration one container contributes, before merging
// (providers.MergeParts), and its place in the merge order.
type piece struct {
	sortKey string
	part    providers.Part[string] // From: the container name
}

// builder accumulates problems for one build.
type builder struct {
	s        settings
	problems []providers.Problem
}

func (b *builder) add(sev providers.Severity, source, msg string, objects ...string) {
	b.problems = append(b.problems, providers.Problem{
		Provider: providerName, Source: source, Objects: objects, Message: msg, Severity: sev,
	})
}

// build turns containers into a snapshot (Traefik's DynConfBuilder.build,
// https://doc.traefik.io/traefik/providers/docker/): filter, decode labels,
// add the default service and router, resolve each service's server from the
// container's address, then merge containers by object name. It does no I/O
// and is deterministic: containers are processed in name order.
func build(containers []containerInfo, s settings) providers.Snapshot {
	b := &builder{s: s}
	self := b.selfNetworks(containers)
	var pieces []piece
	for _, c := range containers {
		if p, ok := b.container(c, self); ok {
			pieces = append(pieces, p)
		}
	}
	cfg, origins := b.merge(pieces)
	slices.SortStableFunc(b.problems, func(x, y providers.Problem) int {
		return cmp.Or(strings.Compare(x.Source, y.Source), strings.Compare(x.Message, y.Message))
	})
	return providers.Snapshot{Config: cfg, Problems: b.problems, Origins: origins}
}

// selfNetworks returns the networks of Gantry's own container, if listed.
func (b *builder) selfNetworks(cs []containerInfo) map[string]bool {
	for _, c := range cs {
		if b.isSelf(c) {
			m := map[string]bool{}
			for _, n := range c.Networks {
				m[n.Name] = true
			}
			return m
		}
	}
	return nil
}

// isSelf reports whether c is Gantry's own container.
func (b *builder) isSelf(c containerInfo) bool {
	return len(b.s.selfID) >= 12 && strings.HasPrefix(c.ID, b.s.selfID)
}

// serviceName is the container's default service and router name: the
// compose "<service>_<project>" or the container name, normalized.
func serviceName(c containerInfo) string {
	name := c.Name
	svc, okS := c.Labels[labelComposeService]
	proj, okP := c.Labels[labelComposeProject]
	if okS && okP {
		name = svc + "_" + proj
	}
	if c.Endpoint != "" { // several engines: qualified, so equal names on two hosts do not collide
		name += "_" + c.Endpoint
	}
	return providers.Normalize(name)
}

// container turns one container into its piece of configuration, in the
// steps of Traefik's DynConfBuilder: whether it is exposed
// (b.exposed), whether its state lets it be routed (b.routable), its labels
// decoded (b.decode), its health, then its TCP/UDP objects and its HTTP
// services and routers. ok is false when the container contributes nothing;
// the reasons are in b.problems.
func (b *builder) container(c containerInfo, self map[string]bool) (piece, bool) {
	src := c.source()
	pk := label.ProviderKeys(c.Labels, b.s.prefixes...)
	if !b.exposed(c, pk, src) {
		return piece{}, false
	}
	running, ok := b.routable(c, pk, src)
	if !ok {
		return piece{}, false
	}
	cfg, broken, ok := b.decode(c, src)
	if !ok {
		return piece{}, false
	}
	h := cfg.HTTP

	name := serviceName(c)
	healthy := c.Health == "" || c.Health == "healthy"
	if !healthy && !b.s.allowEmptyServices {
		b.add(providers.SeverityPending, src, b.healthReason(c)+": not routed until the health check passes", objectsOf(h, name)...)
		return piece{}, false
	}
	if !healthy {
		b.add(providers.SeverityPending, src, b.healthReason(c)+": its services have no servers until the health check passes (allowEmptyServices)", objectsOf(h, name)...)
	}

	withServers := healthy && running
	// TCP and UDP first: as in Traefik, declaring them suppresses the
	// default HTTP router and service unless HTTP objects are declared too.
	if hasTCPUDP(cfg, broken) {
		b.tcpUDP(c, cfg, name, self, withServers, broken)
		if len(h.Routers)+len(h.Services)+len(h.Middlewares)+countBroken(broken, "router")+countBroken(broken, "service")+countBroken(broken, "middleware")+countBroken(broken, "serversTransport") == 0 {
			return b.piece(c, name, cfg, false), true
		}
	}
	b.httpServices(c, h, name, self, withServers, broken)
	b.routers(c, h, name, countBroken(broken, "service"), countBroken(broken, "router"))

	return b.piece(c, name, cfg, true), true
}

// exposed reports whether container c is to be routed at all: its enable
// label (pk["enable"], else exposedByDefault; Gantry's own container only
// with an explicit label) and the provider's constraints. A malformed enable
// label leaves the container out, with a problem at src.
func (b *builder) exposed(c containerInfo, pk map[string]string, src string) bool {
	enable := b.s.exposedByDefault
	if v, ok := pk["enable"]; ok {
		e, err := parseBool(v)
		if err != nil {
			b.add(providers.SeverityError, src+" label "+b.keyOf(c, "enable"), err.Error()+"; container left out")
			return false
		}
		enable = e
	}
	if _, explicit := pk["enable"]; !explicit && b.isSelf(c) {
		// Gantry's own container: its default router would route to itself
		// (Traefik adds a deny-recursion middleware instead). An explicit
		// enable label still exposes it.
		enable = false
	}
	return enable && b.s.constraints(c.Labels)
}

// routable reports whether container c's state lets it be routed: running,
// or any state with the docker.allownonrunning label (running then reports
// whether it really runs, so its services get no servers otherwise). A
// restarting or paused container that is left out gets a pending problem.
func (b *builder) routable(c containerInfo, pk map[string]string, src string) (running, ok bool) {
	allowNonRunning := false
	if v, ok := pk["docker.allownonrunning"]; ok {
		a, err := parseBool(v)
		if err != nil {
			b.add(providers.SeverityError, src+" label "+b.keyOf(c, "docker.allownonrunning"), err.Error()+"; taken as false")
		}
		allowNonRunning = a
	}
	running = c.State == "running"
	if !running && !allowNonRunning {
		switch c.State {
		case "restarting", "paused":
			b.add(providers.SeverityPending, src, fmt.Sprintf("container is %s: not routed until it runs", c.State))
		}
		return false, false
	}
	return running, true
}

// decode decodes container c's labels into a configuration. An error that
// spoils the whole container (providers.SkipErrors) leaves it out (ok
// false); any other key error is a problem, and an error-severity one
// disables its object: broken holds those objects ("service api").
func (b *builder) decode(c containerInfo, src string) (cfg *config.Configuration, broken map[string]bool, ok bool) {
	cfg, kerrs := label.Decode(c.Labels, b.s.prefixes...)
	if skip := providers.SkipErrors(kerrs); len(skip) > 0 {
		for _, e := range skip {
			b.add(providers.SeverityError, src+" label "+e.Key, e.Err.Error()+"; container left out")
		}
		return nil, nil, false
	}
	broken = map[string]bool{}
	for _, e := range kerrs {
		sev, objs := providers.KeyErrorKind(e)
		msg := e.Err.Error()
		if sev == providers.SeverityError && e.Object != "" {
			msg += "; " + e.Object + " left out"
			broken[e.Object] = true
		}
		b.add(sev, src+" label "+e.Key, msg, objs...)
	}
	return cfg, broken, true
}

// countBroken is how many objects of kind ("router", "service", ...) the
// label errors disabled.
func countBroken(broken map[string]bool, kind string) int {
	n := 0
	for o := range broken {
		if strings.HasPrefix(o, kind+" ") {
			n++
		}
	}
	return n
}

// httpServices completes h's services for container c: the default service
// (name) when the labels declare none and none was disabled, then each
// load-balanced service's server from the container's address (none unless
// withServers). A service whose server cannot be resolved is left out with a
// problem and marked in broken.
func (b *builder) httpServices(c containerInfo, h *config.HTTPConfiguration, name string, self map[string]bool, withServers bool, broken map[string]bool) {
	if len(h.Services) == 0 && countBroken(broken, "service") == 0 {
		h.Services[name] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	}
	for _, sn := range slices.Sorted(maps.Keys(h.Services)) {
		lb := h.Services[sn].LoadBalancer
		if lb == nil {
			continue // weighted, mirroring, failover: no servers of their own
		}
		if !withServers {
			lb.Servers = nil
			continue
		}
		if err := b.addServer(c, sn, lb, self); err != nil {
			b.add(providers.SeverityError, err.source, err.msg+"; service "+sn+" left out", "service "+sn)
			delete(h.Services, sn)
			broken["service "+sn] = true
		}
	}
}

// piece is what container c (default service name) contributes: cfg's
// HTTP, TCP and UDP objects, its TLS stores when withStores, and the
// dynamic entrypoints it asks for (gantry.entrypoints.<name>.address), each
// located by its label.
func (b *builder) piece(c containerInfo, name string, cfg *config.Configuration, withStores bool) piece {
	p := piece{sortKey: name + "-" + c.ID, part: providers.Part[string]{From: c.Name,
		Config: &config.Configuration{HTTP: cfg.HTTP, TCP: cfg.TCP, UDP: cfg.UDP, EntryPoints: cfg.EntryPoints}}}
	if withStores && cfg.TLS != nil {
		p.part.Config.TLS = &config.TLSConfiguration{Stores: cfg.TLS.Stores}
	}
	if len(cfg.EntryPoints) == 0 {
		return p
	}
	p.part.EntryPoints = map[string]string{}
	for n := range cfg.EntryPoints {
		key := b.s.prefixes[0] + ".entrypoints." + n + ".address"
		suffix := strings.ToLower(".entrypoints." + n + ".address")
		for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
			if strings.HasSuffix(strings.ToLower(k), suffix) {
				key = k
				break
			}
		}
		p.part.EntryPoints[n] = c.source() + " label " + key
	}
	return p
}

// objectsOf lists the routers and services a container defines or would get
// by default, for a pending problem.
func objectsOf(h *config.HTTPConfiguration, name string) []string {
	var out []string
	for _, r := range slices.Sorted(maps.Keys(h.Routers)) {
		out = append(out, "router "+r)
	}
	if len(h.Routers) == 0 && len(h.Services) <= 1 {
		out = append(out, "router "+name)
	}
	for _, s := range slices.Sorted(maps.Keys(h.Services)) {
		out = append(out, "service "+s)
	}
	if len(h.Services) == 0 {
		out = append(out, "service "+name)
	}
	return out
}

func (b *builder) healthReason(c containerInfo) string {
	r := "health status " + c.Health
	if c.HealthLog != "" {
		r += " (last check: " + c.HealthLog + ")"
	}
	return r
}

// routers adds the default router and links routers without a service
// (Traefik's BuildRouterConfiguration). Services and routers disabled by a
// bad label still count: a broken declaration must not make Gantry guess.
func (b *builder) routers(c containerInfo, h *config.HTTPConfiguration, name string, brokenServices, brokenRouters int) {
	src := c.source()
	nServices := len(h.Services) + brokenServices
	if len(h.Routers) == 0 && brokenRouters == 0 {
		if nServices > 1 {
			b.add(providers.SeverityWarning, src, fmt.Sprintf("no router created: the container has %d services; add a router label with a service", nServices))
		} else {
			h.Routers[name] = &config.Router{}
		}
	}
	for _, rn := range slices.Sorted(maps.Keys(h.Routers)) {
		r := h.Routers[rn]
		if r.Rule == "" {
			var buf bytes.Buffer
			data := ruleData{Name: name, ContainerName: c.Name, Labels: c.Labels}
			if err := b.s.defaultRule.Execute(&buf, data); err != nil {
				b.add(providers.SeverityError, src, fmt.Sprintf("router %s: default rule: %v; router left out", rn, err), "router "+rn)
				delete(h.Routers, rn)
				continue
			}
			if buf.Len() == 0 {
				b.add(providers.SeverityError, src, fmt.Sprintf("router %s: no rule, and the default rule is empty; router left out", rn), "router "+rn)
				delete(h.Routers, rn)
				continue
			}
			r.Rule = buf.String()
		}
		if r.Service != "" {
			continue
		}
		if nServices != 1 {
			b.add(providers.SeverityError, src, fmt.Sprintf("router %s has no service and cannot be linked automatically: the container has %d services (%s); add a label %s.http.routers.%s.service", rn, nServices, strings.Join(slices.Sorted(maps.Keys(h.Services)), ", "), b.s.prefixes[len(b.s.prefixes)-1], rn), "router "+rn)
			delete(h.Routers, rn)
			continue
		}
		for sn := range h.Services {
			r.Service = sn
		}
		if r.Service == "" {
			// The only service was left out because of an error (already reported).
			b.add(providers.SeverityError, src, fmt.Sprintf("router %s: its only service was left out; router left out", rn), "router "+rn)
			delete(h.Routers, rn)
		}
	}
}

// keyOf returns the label key as written for a provider key such as
// "enable", preferring the first prefix.
func (b *builder) keyOf(c containerInfo, key string) string {
	for _, p := range b.s.prefixes {
		for k := range c.Labels {
			if strings.EqualFold(k, p+"."+key) {
				return k
			}
		}
	}
	return b.s.prefixes[0] + "." + key
}

// labelFor finds the label key as written for a service's server field
// ("url"), for problems; it falls back to the canonical spelling.
func (b *builder) labelFor(c containerInfo, svc, field string) string {
	suffix := strings.ToLower(".http.services." + svc + ".loadbalancer.server." + field)
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if strings.HasSuffix(strings.ToLower(k), suffix) {
			return k
		}
	}
	return b.s.prefixes[0] + ".http.services." + svc + ".loadbalancer.server." + field
}

// parseBool is strconv.ParseBool, as Traefik reads enable (case 036).
func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("invalid boolean %q: want true or false (or 1, t, T, TRUE, True, 0, f, F, FALSE, False)", v)
	}
	return b, nil
}

// providerKey returns a provider-specific label (such as docker.network)
// of c, read under prefixes.
func providerKey(c containerInfo, prefixes []string, key string) (string, bool) {
	v, ok := label.ProviderKeys(c.Labels, prefixes...)[key]
	return v, ok
}

package consul

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/providers"
)

// CatalogName is the catalog provider's name, qualifying its objects as
// "api@consulcatalog".
const CatalogName = "consulcatalog"

// builder turns catalog data into a snapshot. It is immutable once made by
// NewCatalog and safe for concurrent use.
type builder struct {
	// prefixes are the tag prefixes read, the configured one first.
	prefixes         []string
	exposedByDefault bool
	constraint       constraint
	defaultRule      *template.Template
	// allowed holds the aggregated health statuses that get traffic.
	allowed []string
}

// instance is one registration of a service on one node.
type instance struct {
	// where names the instance in problems: "service api instance n1/api-1".
	where string
}

// build is the catalog provider's pure function: from every watched
// service's health entries (as returned by /v1/health/service/<name>) to a
// complete snapshot. Instances are keyed by node and service ID (case 018),
// filtered by enable, constraints and aggregated health (case 017), decoded,
// given their server, and merged: same-named services union their servers,
// objects defined differently by two instances are left out. Connect
// proxies and gateways (service kinds other than typical) are skipped.
//
// build is buildService for each service, then assemble; Run keeps each
// service's part until that service changes.
func (b *builder) build(services map[string][]*api.ServiceEntry) providers.Snapshot {
	parts := make([]*servicePart, 0, len(services))
	for _, name := range slices.Sorted(maps.Keys(services)) {
		parts = append(parts, b.buildService(name, services[name]))
	}
	return assemble(parts)
}

// servicePart is what one Consul service contributes to a snapshot. It is
// immutable once built: assemble copies what it merges.
type servicePart struct {
	items    []item
	problems []providers.Problem
}

// buildService decodes every instance of one service.
func (b *builder) buildService(name string, entries []*api.ServiceEntry) *servicePart {
	part := &servicePart{}
	for _, e := range entries {
		if e == nil || e.Service == nil || e.Node == nil {
			continue
		}
		it, ps := b.buildInstance(name, e)
		part.problems = append(part.problems, ps...)
		if it != nil {
			part.items = append(part.items, *it)
		}
	}
	return part
}

// assemble merges the parts of every service, given in service-name order,
// into one snapshot; instances are merged in node and service ID order.
func assemble(parts []*servicePart) providers.Snapshot {
	var items []item
	var problems []providers.Problem
	for _, p := range parts {
		items = append(items, p.items...)
		problems = append(problems, p.problems...)
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.key, b.key) })
	cfg, origins, ps := mergeItems(items)
	return providers.Snapshot{Config: cfg, Problems: append(problems, ps...), Origins: origins}
}

// buildInstance decodes one instance. It returns nil when the instance is
// filtered out or unusable, with the problems that say why.
func (b *builder) buildInstance(name string, e *api.ServiceEntry) (*item, []providers.Problem) {
	if e.Service.Kind != api.ServiceKindTypical {
		// Connect sidecars and gateways speak mTLS (Consul Connect), which
		// gantry does not: routing to them could never work.
		return nil, nil
	}
	in := instance{where: fmt.Sprintf("service %s instance %s/%s", name, e.Node.Node, e.Service.ID)}
	labels, ps := tagLabels(in, e.Service.Tags)
	prov := label.ProviderKeys(labels, b.prefixes...)
	enabled := b.exposedByDefault
	if v, ok := prov["enable"]; ok {
		en, err := strconv.ParseBool(v)
		if err != nil {
			return nil, append(ps, in.problem("tag "+b.prefixes[0]+".enable", providers.SeverityError, nil,
				fmt.Sprintf("invalid boolean %q; instance not routed", v)))
		}
		enabled = en
	}
	if !enabled {
		return nil, ps
	}
	if v := prov["consulcatalog.connect"]; strings.EqualFold(v, "true") {
		return nil, append(ps, in.problem("tag "+b.prefixes[0]+".consulcatalog.connect", providers.SeverityError, nil,
			"consul connect is not supported by gantry; instance not routed"))
	}
	if !b.constraint(e.Service.Tags) {
		return nil, ps
	}
	status := e.Checks.AggregatedStatus()
	if !slices.Contains(b.allowed, status) {
		return nil, append(ps, in.problem("health", providers.SeverityPending, nil,
			fmt.Sprintf("aggregated health %q is not in strictChecks [%s]; instance not routed",
				status, strings.Join(b.allowed, ", "))))
	}

	cfg, kerrs := label.Decode(labels, b.prefixes...)
	if bad := providers.SkipErrors(kerrs); len(bad) > 0 {
		// Traefik fails the whole service's decode (case 010).
		for _, ke := range bad {
			ps = append(ps, in.problem("tag "+ke.Key, providers.SeverityError, nil, ke.Err.Error()+"; instance not routed"))
		}
		return nil, ps
	}
	declared := map[string]bool{} // kinds with an object left out by a bad tag
	var failed []string           // services left out by a bad tag
	for _, ke := range kerrs {
		sev, objs := providers.KeyErrorKind(ke)
		if ke.Object != "" {
			kind, obj, _ := strings.Cut(ke.Object, " ")
			declared[kind] = true
			if kind == "tcp" || kind == "udp" {
				sub, _, _ := strings.Cut(obj, " ")
				declared[kind+" "+sub] = true // "tcp service"
			}
			if kind == "service" && !slices.Contains(failed, obj) {
				failed = append(failed, obj)
			}
		}
		ps = append(ps, in.problem("tag "+ke.Key, sev, objs, ke.Err.Error()))
	}
	svcName := serviceName(name, e.Service.Tags, strings.EqualFold(prov["consulcatalog.canary"], "true"))
	h := cfg.HTTP
	// TCP and UDP first: as in Traefik, declaring only them suppresses the
	// default HTTP router and service.
	if cfg.TCP != nil || cfg.UDP != nil || declared["tcp"] || declared["udp"] {
		ps = append(ps, buildTCPUDP(in, cfg, e, svcName, declared)...)
		if len(h.Routers) == 0 && len(h.Services) == 0 && len(h.Middlewares) == 0 && !declared["router"] && !declared["service"] && !declared["middleware"] {
			return &item{key: e.Node.Node + "\x00" + e.Service.ID, from: origin{name, e.Node.Node + "/" + e.Service.ID},
				cfg: cfg, forms: providers.PartForms(cfg), epSources: epSources(in, cfg, labels)}, ps
		}
	}
	if len(h.Services) == 0 && !declared["service"] {
		h.Services[svcName] = &config.Service{LoadBalancer: &config.ServersLoadBalancer{}}
	}
	// names keeps every service of the instance, including those left out
	// below, so that a router still links to its (failed) service and
	// reports it as missing instead of vanishing.
	names := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(h.Services)), failed...)))
	for _, sn := range names {
		if h.Services[sn] == nil {
			continue
		}
		lb := h.Services[sn].LoadBalancer
		if lb == nil {
			continue // weighted, mirroring, failover: no servers of their own
		}
		if err := addServer(lb, e); err != nil {
			delete(h.Services, sn)
			ps = append(ps, in.problem("service "+sn, providers.SeverityError, []string{"service " + sn}, err.Error()))
		}
	}
	ps = append(ps, b.buildRouters(in, h, names, svcName, declared["router"], ruleModel{Name: name, Labels: labels})...)
	return &item{key: e.Node.Node + "\x00" + e.Service.ID, from: origin{name, e.Node.Node + "/" + e.Service.ID},
		cfg: cfg, forms: providers.PartForms(cfg), epSources: epSources(in, cfg, labels)}, ps
}

// epSources locates the tag of each dynamic entrypoint cfg asks for
// (gantry.entrypoints.<name>.address), as written.
func epSources(in instance, cfg *config.Configuration, tags map[string]string) map[string]string {
	if len(cfg.EntryPoints) == 0 {
		return nil
	}
	out := map[string]string{}
	for n := range cfg.EntryPoints {
		key := "gantry.entrypoints." + n + ".address"
		suffix := strings.ToLower(".entrypoints." + n + ".address")
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			if strings.HasSuffix(strings.ToLower(k), suffix) {
				key = k
				break
			}
		}
		out[n] = "consul " + in.where + " tag " + key
	}
	return out
}

// buildRouters applies Traefik's default router rules
// (provider.BuildRouterConfiguration): without a declared router, a service
// that is alone gets a router named after it; a router without rule gets
// the rendered defaultRule; a router without service is linked to the only
// service, and left out when there are several.
func (b *builder) buildRouters(in instance, h *config.HTTPConfiguration, services []string, defName string, declared bool, model ruleModel) []providers.Problem {
	var ps []providers.Problem
	if len(h.Routers) == 0 && !declared {
		if len(services) != 1 {
			return nil // several services and no router: nothing to route (Traefik logs "too many services")
		}
		h.Routers[defName] = &config.Router{}
	}
	for _, rn := range slices.Sorted(maps.Keys(h.Routers)) {
		r := h.Routers[rn]
		if r.Rule == "" {
			rule, err := renderRule(b.defaultRule, model)
			if err != nil {
				delete(h.Routers, rn)
				ps = append(ps, in.problem("router "+rn, providers.SeverityError, []string{"router " + rn}, err.Error()))
				continue
			}
			r.Rule = rule
		}
		if r.Service == "" {
			if len(services) != 1 {
				delete(h.Routers, rn)
				ps = append(ps, in.problem("router "+rn, providers.SeverityError, []string{"router " + rn},
					fmt.Sprintf("router has no service and cannot be linked automatically with %d services", len(services))))
				continue
			}
			r.Service = services[0]
		}
	}
	return ps
}

// addServer gives lb this instance's server: the service address, else the
// node address (Traefik #5811), and the port of the
// loadbalancer.server.port tag, else the registered port. Scheme defaults to
// http. A loadbalancer.server.url tag is used as is and excludes port and
// scheme.
func addServer(lb *config.ServersLoadBalancer, e *api.ServiceEntry) error {
	if len(lb.Servers) == 0 {
		lb.Servers = []config.Server{{}}
	}
	s := &lb.Servers[0]
	if s.URL != "" {
		if s.Port != "" || s.Scheme != "" {
			return errors.New("loadbalancer.server.url excludes loadbalancer.server.port and loadbalancer.server.scheme")
		}
		lb.Servers = lb.Servers[:1]
		return nil
	}
	addr := e.Service.Address
	if addr == "" {
		addr = e.Node.Address
	}
	if addr == "" {
		return errors.New("instance has neither a service address nor a node address")
	}
	port := s.Port
	if port == "" && e.Service.Port > 0 {
		port = strconv.Itoa(e.Service.Port)
	}
	if port == "" {
		return errors.New("no port: register the service with a port or set loadbalancer.server.port")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("port %q: want 1-65535", port)
	}
	scheme := s.Scheme
	if scheme == "" {
		scheme = "http"
	}
	s.URL = scheme + "://" + net.JoinHostPort(addr, port)
	s.Port, s.Scheme = "", ""
	lb.Servers = lb.Servers[:1]
	return nil
}

// serviceName is the default service (and router) name of an instance: the
// normalized Consul name, or for a canary (tag consulcatalog.canary=true)
// the name plus an FNV-64 hash of the sorted tags, so canaries form their
// own load balancer (Traefik's getName).
func serviceName(name string, tags []string, canary bool) string {
	if !canary {
		return providers.Normalize(name)
	}
	sorted := slices.Sorted(slices.Values(tags))
	h := fnv.New64()
	h.Write([]byte(strings.Join(sorted, "")))
	return providers.Normalize(fmt.Sprintf("%s-%d", name, h.Sum64()))
}

// tagLabels parses key=value tags into labels. Tags without "=" are not
// configuration (they still count for constraints). A key given twice with
// different values keeps the first and yields a warning.
func tagLabels(in instance, tags []string) (map[string]string, []providers.Problem) {
	labels := map[string]string{}
	var ps []providers.Problem
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if old, dup := labels[k]; dup && old != v {
			ps = append(ps, in.problem("tag "+k, providers.SeverityWarning, nil,
				fmt.Sprintf("given twice (%q and %q); the first is used", old, v)))
			continue
		}
		labels[k] = v
	}
	return labels, ps
}

// problem makes a Problem located at this instance; what is "tag <key>",
// "health", "service <name>" or "router <name>".
func (in instance) problem(what string, sev providers.Severity, objects []string, msg string) providers.Problem {
	return providers.Problem{
		Provider: CatalogName,
		Source:   "consul " + in.where + " " + what,
		Objects:  objects,
		Message:  msg,
		Severity: sev,
	}
}

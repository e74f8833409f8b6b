package config

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
)

// MaxPriority is the highest priority a user may give a router; the range
// above it is reserved for internal routers (Traefik: MaxInt - 1000,
// https://doc.traefik.io/traefik/routing/routers/#priority).
const MaxPriority = math.MaxInt - 1000

// ValidationError is one problem found by Validate: the object (kind and
// name), the field path inside it, and what is wrong.
type ValidationError struct {
	Kind  string // "router", "service", "middleware", "serversTransport", "tls", or a Kind* constant (TCP, UDP)
	Name  string // the object's name as it appears in the configuration
	Field string // dotted field path, e.g. "loadBalancer.servers[0].url"
	Msg   string
}

// Error renders "router web: field rule: empty".
func (e ValidationError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s %s: %s", e.Kind, e.Name, e.Msg)
	}
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, e.Name, e.Field, e.Msg)
}

// Validate checks the structure of c and returns every problem found, in a
// deterministic order (by kind, then name). It does not parse rules (router
// does) and does not check cross-references between objects, because those
// may point at objects from other providers (router.Compile checks them on
// the merged configuration). A nil or empty configuration is valid.
func Validate(c *Configuration) []ValidationError {
	var errs []ValidationError
	if c == nil {
		return nil
	}
	if c.HTTP != nil {
		parents := parentNames(c.HTTP.Routers)
		errs = append(errs, validateEach("router", c.HTTP.Routers, func(e fieldErrorf, name string, r *Router) []ValidationError {
			return validateRouter(e, name, r, parents)
		})...)
		errs = append(errs, validateEach("service", c.HTTP.Services, validateService)...)
		for _, name := range sortedKeys(c.HTTP.Middlewares) {
			errs = append(errs, validateMiddleware(name, c.HTTP.Middlewares[name])...)
		}
	}
	errs = append(errs, validateTCP(c.TCP)...)
	errs = append(errs, validateUDP(c.UDP)...)
	if c.TLS != nil {
		for i, cert := range c.TLS.Certificates {
			if cert == nil || cert.CertFile == "" || cert.KeyFile == "" {
				errs = append(errs, ValidationError{Kind: "tls", Name: "certificates", Field: fmt.Sprintf("[%d]", i), Msg: "certFile and keyFile are both required"})
			}
		}
	}
	return errs
}

// parentNames returns the router names some router lists in parentRefs,
// both as written and without an "@provider" suffix.
func parentNames(routers map[string]*Router) map[string]bool {
	p := map[string]bool{}
	for _, r := range routers {
		if r == nil {
			continue
		}
		for _, ref := range r.ParentRefs {
			p[ref] = true
			if i := strings.LastIndexByte(ref, '@'); i >= 0 {
				p[ref[:i]] = true
			}
		}
	}
	return p
}

// validateRouter checks one router. A parent router (named in another
// router's parentRefs, Traefik v3.6 multi-layer routing) has no service;
// a child (with parentRefs) may not set entryPoints, tls or observability,
// which come from its root.
func validateRouter(e fieldErrorf, name string, r *Router, parents map[string]bool) []ValidationError {
	var errs []ValidationError
	if strings.TrimSpace(r.Rule) == "" {
		errs = append(errs, e("rule", "empty; a router needs a rule"))
	}
	bare := name
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		bare = name[:i]
	}
	isParent := parents[name] || parents[bare]
	switch {
	case r.Service == "" && !isParent:
		errs = append(errs, e("service", "empty; a router needs a service"))
	case r.Service != "" && isParent:
		errs = append(errs, e("service", "%q set on a router that has child routers (parentRefs): a parent router hands requests to its children, not to a service", r.Service))
	}
	if len(r.ParentRefs) > 0 {
		if len(r.EntryPoints) > 0 {
			errs = append(errs, e("entryPoints", "set on a child router (parentRefs): entrypoints come from the root router"))
		}
		if r.TLS != nil {
			errs = append(errs, e("tls", "set on a child router (parentRefs): TLS comes from the root router"))
		}
		if r.Observability != nil {
			errs = append(errs, e("observability", "set on a child router (parentRefs): observability comes from the root router"))
		}
		for i, p := range r.ParentRefs {
			if p == "" || p == name || p == bare {
				errs = append(errs, e(fmt.Sprintf("parentRefs[%d]", i), "%q: empty or the router itself", p))
			}
		}
	}
	return append(errs, validateRouterCommon(e, &r.RouterCommon)...)
}

// validateRouterCommon checks the RouterCommon fields of an HTTP or TCP
// router beyond its rule and service (whose rules differ): the priority
// (at most MaxPriority), the rule syntax ("", "v2" or "v3") and the
// middleware names (none empty).
func validateRouterCommon(e fieldErrorf, r *RouterCommon) []ValidationError {
	var errs []ValidationError
	if r.Priority > MaxPriority {
		errs = append(errs, e("priority", "%d is above the maximum %d", r.Priority, MaxPriority))
	}
	switch r.RuleSyntax {
	case "", "v2", "v3":
	default:
		errs = append(errs, e("ruleSyntax", "%q is not one of v2, v3", r.RuleSyntax))
	}
	for i, m := range r.Middlewares {
		if m == "" {
			errs = append(errs, e(fmt.Sprintf("middlewares[%d]", i), "empty name"))
		}
	}
	return errs
}

// fieldErrorf makes a ValidationError on one field (dotted path, "" for
// the whole object) of the object it was made for, its message formatted.
type fieldErrorf func(field, format string, a ...any) ValidationError

// fieldErrors returns the fieldErrorf of the object name of kind.
func fieldErrors(kind, name string) fieldErrorf {
	return func(field, format string, a ...any) ValidationError {
		return ValidationError{Kind: kind, Name: name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

func validateService(e fieldErrorf, _ string, s *Service) []ValidationError {
	if _, errs := oneKind(e, "loadBalancer, highestRandomWeight, weighted, mirroring, failover",
		member{"loadBalancer", s.LoadBalancer != nil}, member{"highestRandomWeight", s.HighestRandomWeight != nil},
		member{"weighted", s.Weighted != nil}, member{"mirroring", s.Mirroring != nil}, member{"failover", s.Failover != nil}); errs != nil {
		return errs
	}
	var errs []ValidationError
	switch {
	case s.LoadBalancer != nil:
		lb := s.LoadBalancer
		for i, srv := range lb.Servers {
			f := fmt.Sprintf("loadBalancer.servers[%d]", i)
			if srv.URL == "" {
				errs = append(errs, e(f+".url", "empty"))
				continue
			}
			u, err := url.Parse(srv.URL)
			switch {
			case err != nil:
				errs = append(errs, e(f+".url", "%q does not parse: %v", srv.URL, err))
			case !slices.Contains([]string{"http", "https", "h2c"}, u.Scheme):
				errs = append(errs, e(f+".url", "%q: scheme must be http, https or h2c", srv.URL))
			case u.Host == "":
				errs = append(errs, e(f+".url", "%q: no host", srv.URL))
			}
			if srv.Weight != nil && *srv.Weight < 0 {
				errs = append(errs, e(f+".weight", "%d is negative", *srv.Weight))
			}
		}
		switch lb.Strategy {
		case "", "wrr", "p2c", "hrw", "leasttime":
		default:
			errs = append(errs, e("loadBalancer.strategy", "%q is not one of wrr, p2c, hrw, leasttime", lb.Strategy))
		}
		if hc := lb.HealthCheck; hc != nil {
			if hc.Path != "" && !strings.HasPrefix(hc.Path, "/") {
				errs = append(errs, e("loadBalancer.healthCheck.path", "%q must start with /", hc.Path))
			}
			if hc.Interval < 0 || hc.Timeout < 0 {
				errs = append(errs, e("loadBalancer.healthCheck", "interval and timeout must not be negative"))
			}
			if hc.Port < 0 || hc.Port > 65535 {
				errs = append(errs, e("loadBalancer.healthCheck.port", "%d is out of range", hc.Port))
			}
		}
	case s.HighestRandomWeight != nil:
		if len(s.HighestRandomWeight.Services) == 0 {
			errs = append(errs, e("highestRandomWeight.services", "empty"))
		}
		for i, c := range s.HighestRandomWeight.Services {
			if c.Name == "" {
				errs = append(errs, e(fmt.Sprintf("highestRandomWeight.services[%d].name", i), "empty"))
			}
			if c.Weight != nil && *c.Weight < 0 {
				errs = append(errs, e(fmt.Sprintf("highestRandomWeight.services[%d].weight", i), "%d is negative", *c.Weight))
			}
		}
	case s.Weighted != nil:
		errs = append(errs, validateWRR(e, s.Weighted.Services, true)...)
	case s.Mirroring != nil:
		if s.Mirroring.Service == "" {
			errs = append(errs, e("mirroring.service", "empty"))
		}
		for i, m := range s.Mirroring.Mirrors {
			if m.Name == "" {
				errs = append(errs, e(fmt.Sprintf("mirroring.mirrors[%d].name", i), "empty"))
			}
			if m.Percent < 0 || m.Percent > 100 {
				errs = append(errs, e(fmt.Sprintf("mirroring.mirrors[%d].percent", i), "%d is not within 0-100", m.Percent))
			}
		}
	case s.Failover != nil:
		if s.Failover.Service == "" || s.Failover.Fallback == "" {
			errs = append(errs, e("failover", "service and fallback are both required"))
		}
	}
	return errs
}

// MiddlewareKinds returns the Traefik names of the kinds set in m, in field
// order. A valid middleware has exactly one.
func MiddlewareKinds(m *Middleware) []string {
	if m == nil {
		return nil
	}
	var k []string
	add := func(set bool, name string) {
		if set {
			k = append(k, name)
		}
	}
	add(m.AddPrefix != nil, "addPrefix")
	add(m.StripPrefix != nil, "stripPrefix")
	add(m.StripPrefixRegex != nil, "stripPrefixRegex")
	add(m.ReplacePath != nil, "replacePath")
	add(m.ReplacePathRegex != nil, "replacePathRegex")
	add(m.Chain != nil, "chain")
	add(m.IPAllowList != nil, "ipAllowList")
	add(m.IPWhiteList != nil, "ipWhiteList")
	add(m.Headers != nil, "headers")
	add(m.Errors != nil, "errors")
	add(m.RateLimit != nil, "rateLimit")
	add(m.RedirectRegex != nil, "redirectRegex")
	add(m.RedirectScheme != nil, "redirectScheme")
	add(m.BasicAuth != nil, "basicAuth")
	add(m.DigestAuth != nil, "digestAuth")
	add(m.ForwardAuth != nil, "forwardAuth")
	add(m.InFlightReq != nil, "inFlightReq")
	add(m.Buffering != nil, "buffering")
	add(m.CircuitBreaker != nil, "circuitBreaker")
	add(m.Compress != nil, "compress")
	add(m.PassTLSClientCert != nil, "passTLSClientCert")
	add(m.Retry != nil, "retry")
	add(m.ContentType != nil, "contentType")
	add(m.GrpcWeb != nil, "grpcWeb")
	add(m.EncodedCharacters != nil, "encodedCharacters")
	add(m.Plugin != nil, "plugin")
	add(m.RequestHeaderModifier != nil, "requestHeaderModifier")
	add(m.ResponseHeaderModifier != nil, "responseHeaderModifier")
	add(m.RequestRedirect != nil, "requestRedirect")
	add(m.URLRewrite != nil, "urlRewrite")
	return k
}

// member is one kind of a tagged union and whether an object sets it.
type member struct {
	name string
	set  bool
}

// oneKind checks that exactly one of kinds is set; want lists the kinds
// accepted, for the message. set are the names of the kinds set, in order.
func oneKind(e fieldErrorf, want string, kinds ...member) (set []string, errs []ValidationError) {
	for _, k := range kinds {
		if k.set {
			set = append(set, k.name)
		}
	}
	switch len(set) {
	case 0:
		return set, []ValidationError{e("", "no kind set; want one of %s", want)}
	case 1:
		return set, nil
	default:
		return set, []ValidationError{e("", "more than one kind set (%s); want exactly one", strings.Join(set, ", "))}
	}
}

func validateMiddleware(name string, m *Middleware) []ValidationError {
	kinds := MiddlewareKinds(m)
	switch len(kinds) {
	case 0:
		return []ValidationError{{Kind: "middleware", Name: name, Msg: "no kind set; want exactly one (stripPrefix, headers, …)"}}
	case 1:
		if kinds[0] == "plugin" {
			return []ValidationError{{Kind: "middleware", Name: name, Field: "plugin", Msg: "plugins are not supported by Gantry"}}
		}
		return nil
	default:
		return []ValidationError{{Kind: "middleware", Name: name, Msg: fmt.Sprintf("more than one kind set (%s); want exactly one", strings.Join(kinds, ", "))}}
	}
}

// validateEach checks the objects of m (of kind, a ValidationError.Kind)
// in name order: a nil one is the error "empty definition", any other is
// checked by check, given the object's fieldErrorf and name.
func validateEach[T any](kind string, m map[string]*T, check func(e fieldErrorf, name string, v *T) []ValidationError) []ValidationError {
	var errs []ValidationError
	for _, name := range sortedKeys(m) {
		e := fieldErrors(kind, name)
		if m[name] == nil {
			errs = append(errs, e("", "empty definition"))
			continue
		}
		errs = append(errs, check(e, name, m[name])...)
	}
	return errs
}

// sortedKeys returns the names of m in order, so validation reports
// problems deterministically.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

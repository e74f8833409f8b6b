package ingress

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
)

// AnnotationPrefix starts every annotation the provider reads.
// Source: https://doc.traefik.io/traefik/reference/routing-configuration/kubernetes/ingress/
const AnnotationPrefix = "traefik.ingress.kubernetes.io/"

// routerAnn is what the router.* annotations of an Ingress say.
type routerAnn struct {
	// router holds entryPoints, middlewares, priority, ruleSyntax, tls
	// and observability, decoded as the label
	// traefik.http.routers.<r>.<key> would be.
	router *config.Router
	// pathMatcher replaces PathPrefix for paths of pathType
	// ImplementationSpecific: Path, PathPrefix or PathRegexp.
	pathMatcher string
}

// serviceAnn is what the service.* annotations of a Service say.
type serviceAnn struct {
	lb          config.ServersLoadBalancer // sticky, passHostHeader, serversTransport
	middlewares []string
	scheme      string // serversscheme: overrides http/https
	nativeLB    *bool
}

// annError is a bad annotation: Key is the full annotation key.
type annError struct {
	Key string
	Err error
}

func (e annError) Error() string { return fmt.Sprintf("annotation %s: %v", e.Key, e.Err) }

// maxAnnotationValue bounds one annotation value the provider reads (the
// API server bounds all annotations of an object to 256 KiB together).
const maxAnnotationValue = 64 << 10

// ours returns the annotations under AnnotationPrefix and section
// ("router." or "service."), keyed by the rest in lower case ("tls.certresolver"),
// with the original key for errors.
func ours(annotations map[string]string, section string) (vals map[string]string, orig map[string]string, err error) {
	vals, orig = map[string]string{}, map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		rest, ok := strings.CutPrefix(k, AnnotationPrefix)
		if !ok {
			continue
		}
		rest = strings.ToLower(rest)
		sub, ok := strings.CutPrefix(rest, section)
		if !ok {
			continue
		}
		if len(annotations[k]) > maxAnnotationValue {
			return nil, nil, annError{k, fmt.Errorf("value of %d bytes is over the limit of %d", len(annotations[k]), maxAnnotationValue)}
		}
		vals[sub], orig[sub] = annotations[k], k
	}
	return vals, orig, nil
}

// parseRouter reads the router.* annotations. Unknown keys and bad values
// are errors (Traefik skips the Ingress when its annotations do not
// decode).
func parseRouter(annotations map[string]string) (routerAnn, error) {
	vals, orig, err := ours(annotations, "router.")
	if err != nil || len(vals) == 0 {
		return routerAnn{}, err
	}
	var ra routerAnn
	if pm, ok := vals["pathmatcher"]; ok {
		switch pm {
		case "Path", "PathPrefix", "PathRegexp":
			ra.pathMatcher = pm
		default:
			return routerAnn{}, annError{orig["pathmatcher"], fmt.Errorf("%q: want Path, PathPrefix or PathRegexp", pm)}
		}
		delete(vals, "pathmatcher")
	}
	labels := map[string]string{}
	back := map[string]string{}
	for k, v := range vals {
		switch root, _, _ := strings.Cut(k, "."); root {
		case "entrypoints", "middlewares", "priority", "rulesyntax", "tls", "observability":
		default:
			return routerAnn{}, annError{orig[k], fmt.Errorf("unknown router option %q (known: entrypoints, middlewares, priority, pathmatcher, rulesyntax, tls, tls.certresolver, tls.domains.n.main/sans, tls.options, observability.*)", k)}
		}
		lk := "traefik.http.routers.r." + k
		labels[lk], back[lk] = v, orig[k]
	}
	if len(labels) == 0 {
		return ra, nil
	}
	cfg, errs := label.Decode(labels, "traefik")
	if len(errs) > 0 {
		return routerAnn{}, annError{back[errs[0].Key], errs[0].Err}
	}
	ra.router = cfg.HTTP.Routers["r"]
	if ra.router == nil {
		return routerAnn{}, fmt.Errorf("router annotations decoded to nothing")
	}
	return ra, nil
}

// parseService reads the service.* annotations of a Service.
func parseService(annotations map[string]string) (serviceAnn, error) {
	vals, orig, err := ours(annotations, "service.")
	if err != nil || len(vals) == 0 {
		return serviceAnn{}, err
	}
	var sa serviceAnn
	labels := map[string]string{}
	back := map[string]string{}
	for k, v := range vals {
		switch root, _, _ := strings.Cut(k, "."); root {
		case "serversscheme":
			switch v {
			case "http", "https", "h2c":
				sa.scheme = v
			default:
				return serviceAnn{}, annError{orig[k], fmt.Errorf("%q: want http, https or h2c", v)}
			}
		case "nativelb":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return serviceAnn{}, annError{orig[k], fmt.Errorf("%q: want true or false", v)}
			}
			sa.nativeLB = &b
		case "nodeportlb":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return serviceAnn{}, annError{orig[k], fmt.Errorf("%q: want true or false", v)}
			}
			if b {
				return serviceAnn{}, annError{orig[k], fmt.Errorf("node port load balancing is not supported by Gantry (it needs the Nodes of the cluster); use nativelb or the endpoints")}
			}
		case "middlewares":
			lk := "traefik.http.services.s." + k
			labels[lk], back[lk] = v, orig[k]
		case "passhostheader", "sticky", "serverstransport":
			lk := "traefik.http.services.s.loadbalancer." + k
			labels[lk], back[lk] = v, orig[k]
		default:
			return serviceAnn{}, annError{orig[k], fmt.Errorf("unknown service option %q (known: serversscheme, serverstransport, passhostheader, sticky.cookie.*, nativelb, middlewares)", k)}
		}
	}
	if len(labels) == 0 {
		return sa, nil
	}
	cfg, errs := label.Decode(labels, "traefik")
	if len(errs) > 0 {
		return serviceAnn{}, annError{back[errs[0].Key], errs[0].Err}
	}
	if s := cfg.HTTP.Services["s"]; s != nil {
		sa.middlewares = s.Middlewares
		if s.LoadBalancer != nil {
			sa.lb = *s.LoadBalancer
		}
	}
	return sa, nil
}

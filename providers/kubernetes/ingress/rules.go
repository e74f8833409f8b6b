package ingress

import (
	"fmt"
	"strings"

	netv1 "k8s.io/api/networking/v1"

	"github.com/gantry-proxy/gantry/config/rule"
)

// pathRule is the rule of one Ingress path (Traefik v3.7's loadRouter):
// Host(host) when host is set ("*.example.com" matches one extra label,
// as the Ingress specification says), and the path's matcher: Path for
// pathType Exact, PathPrefix for Prefix (with strict, path elements:
// Path(p) || PathPrefix(p/)), and for ImplementationSpecific the
// router.pathmatcher annotation (Path, PathPrefix or PathRegexp; default
// PathPrefix). No host and no path match everything. v2 is Traefik's v2
// rule syntax (router.rulesyntax "v2"): wildcard hosts become
// HostRegexp.
func pathRule(host string, p netv1.HTTPIngressPath, pathMatcher string, strict, v2 bool) (string, error) {
	var parts []string
	if host != "" {
		switch {
		case v2 && strings.HasPrefix(host, "*."):
			parts = append(parts, "HostRegexp("+rule.Quote("{subdomain:[a-zA-Z0-9-]+}."+host[2:])+")")
		default:
			parts = append(parts, "Host("+rule.Quote(host)+")")
		}
	}
	if p.Path != "" {
		matcher := "PathPrefix"
		pt := netv1.PathTypeImplementationSpecific
		if p.PathType != nil && *p.PathType != "" {
			pt = *p.PathType
		}
		switch pt {
		case netv1.PathTypeExact:
			matcher = "Path"
		case netv1.PathTypePrefix:
		case netv1.PathTypeImplementationSpecific:
			if pathMatcher != "" {
				matcher = pathMatcher
			}
		default:
			return "", fmt.Errorf("pathType %q: want Exact, Prefix or ImplementationSpecific", pt)
		}
		if strict && matcher == "PathPrefix" && p.Path != "/" {
			base := strings.TrimSuffix(p.Path, "/")
			parts = append(parts, "(Path("+rule.Quote(base)+") || PathPrefix("+rule.Quote(base+"/")+"))")
		} else {
			parts = append(parts, matcher+"("+rule.Quote(p.Path)+")")
		}
	}
	if len(parts) == 0 {
		return "PathPrefix(`/`)", nil
	}
	return strings.Join(parts, " && "), nil
}

package ingressnginx

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	netv1 "k8s.io/api/networking/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// maxPathBytes bounds an Ingress path (and so a regular expression).
const maxPathBytes = 1024

// location is one path of one rule of an Ingress: two routers (plain and
// TLS), a service, and the middlewares of the Ingress's annotations.
type location struct {
	in       *ingress
	name     string // router and service name
	host     string
	path     string
	pathType netv1.PathType
	regex    bool
	backend  netv1.IngressServiceBackend
	canary   *canaryRef
}

// build translates one main (non-canary) Ingress.
func (t *translator) build(in *ingress) {
	ing := in.ing
	t.loadCerts(in)
	if in.s.authType != "" && in.s.denied == "" {
		t.resolveUsers(in)
	}
	if in.s.customHeaders != "" && in.s.denied == "" {
		in.s.responseHeaders = t.customHeaders(in)
	}
	for ri, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		host := strings.ToLower(strings.TrimSuffix(r.Host, "."))
		for pi, p := range r.HTTP.Paths {
			name := fmt.Sprintf("%s-%s-rule-%d-path-%d", ing.Namespace, ing.Name, ri, pi)
			if p.Backend.Service == nil {
				t.problem(in, providers.SeverityWarning, []string{"router " + name}, "rule %d path %d: only Service backends are served (resource backends are not)", ri, pi)
				continue
			}
			pt := netv1.PathTypePrefix
			if p.PathType != nil {
				pt = *p.PathType
			}
			path := p.Path
			if path == "" {
				path = "/"
			}
			loc := &location{in: in, name: name, host: host, path: path, pathType: pt, regex: t.regexHosts[host], backend: *p.Backend.Service}
			k := pathKey(ing.Namespace, r.Host, p)
			loc.canary = t.canaries[k]
			claim := host + "\x00" + path + "\x00" + string(pt)
			if loc.regex {
				claim = host + "\x00~" + path
			}
			if owner, ok := t.seenPaths[claim]; ok {
				t.problem(in, providers.SeverityWarning, []string{"router " + name}, "host %q path %q is already served by Ingress %s (the oldest Ingress keeps a path, as in ingress-nginx)", host, path, owner)
				continue
			}
			t.seenPaths[claim] = key(ing)
			t.location(loc)
		}
	}
	if ing.Spec.DefaultBackend != nil {
		t.problem(in, providers.SeverityWarning, nil, "spec.defaultBackend is not served by this provider")
	}
}

// loadCerts adds the certificates of the Ingress's TLS sections.
func (t *translator) loadCerts(in *ingress) {
	for _, tl := range in.ing.Spec.TLS {
		if tl.SecretName == "" {
			continue
		}
		k := in.ing.Namespace + "/" + tl.SecretName
		if t.certs[k] {
			continue
		}
		t.certs[k] = true
		sec, err := t.cl.Secret(in.ing.Namespace, tl.SecretName)
		if err != nil {
			t.problem(in, providers.SeverityWarning, nil, "tls secret %s: %v (the default certificate is served)", k, err)
			continue
		}
		c, err := k8s.TLSFromSecret(sec)
		if err != nil {
			t.problem(in, providers.SeverityWarning, nil, "tls secret %s: %v (the default certificate is served)", k, err)
			continue
		}
		t.conf.TLS.Certificates = append(t.conf.TLS.Certificates, &config.CertAndStores{Certificate: c})
	}
}

// rule builds the router rule and priority of a location. Priorities
// reproduce nginx's choice: a named host before a wildcard before none,
// then the longest path, an exact path before a prefix of the same length.
func (t *translator) rule(loc *location) (string, int, error) {
	if len(loc.path) > maxPathBytes {
		return "", 0, fmt.Errorf("path is %d bytes, over the %d-byte limit", len(loc.path), maxPathBytes)
	}
	if strings.ContainsAny(loc.path, "`\r\n") {
		return "", 0, fmt.Errorf("path %q contains a backtick or a line break", shown(loc.path))
	}
	var parts []string
	prio := 0
	if loc.host != "" {
		hosts := []string{loc.host}
		for _, a := range loc.in.s.aliases {
			if t.ruleHosts[a] || t.aliases[a] != key(loc.in.ing) || a == loc.host {
				continue // ingress-nginx ignores an alias that is a host, or another Ingress's
			}
			hosts = append(hosts, a)
		}
		var hs []string
		for _, h := range hosts {
			if rest, ok := strings.CutPrefix(h, "*."); ok {
				// nginx's *.example.com matches any number of labels.
				hs = append(hs, "HostRegexp(`(?i)^[^:]+\\."+regexp.QuoteMeta(rest)+"$`)")
			} else {
				hs = append(hs, "Host(`"+h+"`)")
			}
		}
		if len(hs) == 1 {
			parts = append(parts, hs[0])
		} else {
			parts = append(parts, "("+strings.Join(hs, " || ")+")")
		}
		prio = 2 << 20
		if strings.HasPrefix(loc.host, "*.") {
			prio = 1 << 20
		}
	}
	p := loc.path
	switch {
	case loc.regex:
		re := "(?i)^" + p
		if _, err := regexp.Compile(re); err != nil {
			return "", 0, fmt.Errorf("path %q is not a Go (RE2) regular expression: %w", shown(p), err)
		}
		parts = append(parts, "PathRegexp(`"+re+"`)")
	case loc.pathType == netv1.PathTypeExact:
		parts = append(parts, "Path(`"+p+"`)")
		prio += 4
	case loc.pathType == netv1.PathTypeImplementationSpecific:
		// ingress-nginx: a plain nginx prefix location ("/foo" matches "/foobar").
		parts = append(parts, "PathPrefix(`"+p+"`)")
	default:
		switch {
		case p == "/":
			parts = append(parts, "PathPrefix(`/`)")
		case strings.HasSuffix(p, "/") || t.exactPaths[loc.host+"\x00"+p]:
			// ingress-nginx: location /foo/ (and location = /foo/,
			// unless an Exact path of the host already has it).
			parts = append(parts, "PathPrefix(`"+strings.TrimSuffix(p, "/")+"/`)")
		default:
			// ingress-nginx: location = /foo and location /foo/.
			parts = append(parts, "(Path(`"+p+"`) || PathPrefix(`"+p+"/`))")
		}
		if !strings.HasSuffix(p, "/") {
			p += "/" // nginx's longest prefix is the normalized one
		}
	}
	if !strings.HasPrefix(p, "/") && !loc.regex {
		return "", 0, fmt.Errorf("path %q does not start with /", shown(p))
	}
	prio += 1 + len(p)*8
	return strings.Join(parts, " && "), prio, nil
}

// location translates one path.
func (t *translator) location(loc *location) {
	s, o := loc.in.s, t.o
	rule, prio, err := t.rule(loc)
	if err != nil {
		t.problem(loc.in, providers.SeverityError, []string{"router " + loc.name}, "%v", err)
		return
	}
	svc := t.service(loc)
	plain := &config.Router{RouterCommon: config.RouterCommon{EntryPoints: []string{o.HTTPEntryPoint}, Rule: rule, Priority: prio, Service: svc}}
	secure := &config.Router{RouterCommon: config.RouterCommon{EntryPoints: []string{o.HTTPSEntryPoint}, Rule: rule, Priority: prio, Service: svc}, TLS: &config.RouterTLSConfig{}}
	if s.denied != "" {
		plain.Service, secure.Service = unavailable, unavailable
		t.problem(loc.in, providers.SeverityError, []string{"router " + loc.name}, "%s: its paths answer 503", s.denied)
	} else {
		mws := t.middlewares(loc)
		plain.Middlewares, secure.Middlewares = mws, mws
	}
	redirect := s.forceSSLRedirect || (t.tlsHosts[loc.host] && (s.sslRedirect == nil || *s.sslRedirect))
	if s.verdicts["ssl-redirect"] != nil && s.sslRedirect != nil && *s.sslRedirect && !t.tlsHosts[loc.host] && !s.forceSSLRedirect {
		s.verdicts["ssl-redirect"].Detail = "no effect: host " + strconv.Quote(loc.host) + " has no TLS section (use force-ssl-redirect)"
	}
	if redirect {
		mw := loc.name + "-redirect-scheme"
		t.conf.HTTP.Middlewares[mw] = &config.Middleware{RedirectScheme: &config.RedirectScheme{Scheme: "https", Permanent: true}}
		plain.Middlewares = []string{mw}
	}
	t.conf.HTTP.Routers[loc.name] = plain
	t.conf.HTTP.Routers[loc.name+"-tls"] = secure
	if s.denied == "" && loc.canary != nil {
		t.canaryRouters(loc, plain, secure)
	}
}

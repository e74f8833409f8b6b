package gateway

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// backendRef is an HTTP or gRPC backendRef with its own filters.
type backendRef struct {
	ref     gwv1.BackendObjectReference
	weight  *int32
	filters []gwv1.HTTPRouteFilter
}

// weightedService builds a rule's weighted service over its backendRefs.
// A rule without backendRefs, or whose weights are all 0, answers 500; an
// invalid backendRef gets its share of requests answered 500 (Gateway API
// HTTPBackendRef). It returns the first invalid ref's error.
func (t *translator) weightedService(m routeMeta, base, field string, refs []backendRef, defScheme, transport string) (string, *refError) {
	if len(refs) == 0 {
		return t.statusService(500), nil
	}
	var first *refError
	var children []config.WRRService
	total := 0
	for i, b := range refs {
		w := int(ptrOr(b.weight, 1))
		total += w
		svc, rerr := t.httpService(m.kind, m.obj.Namespace, b.ref, defScheme, transport)
		if rerr != nil {
			t.problem(providers.SeverityError, m.kind, m.obj.Namespace, m.obj.Name, fmt.Sprintf("%s.backendRefs[%d]", field, i), "%s", rerr.msg)
			if first == nil {
				first = rerr
			}
			children = append(children, config.WRRService{Status: new(500), Weight: new(w)})
			continue
		}
		if len(b.filters) > 0 {
			name := objName(base, "b"+strconv.Itoa(i))
			mws, failed := t.filters(m, name, b.filters, "", "", 0, fmt.Sprintf("%s.backendRefs[%d].filters", field, i))
			if failed {
				children = append(children, config.WRRService{Status: new(500), Weight: new(w)})
				continue
			}
			t.conf.HTTP.Services[name] = &config.Service{
				Middlewares: mws,
				Weighted:    &config.WeightedRoundRobin{Services: []config.WRRService{{Name: svc}}},
			}
			svc = name
		}
		children = append(children, config.WRRService{Name: svc, Weight: new(w)})
	}
	if total == 0 {
		return t.statusService(500), first
	}
	name := base + "-wrr"
	t.conf.HTTP.Services[name] = &config.Service{Weighted: &config.WeightedRoundRobin{Services: children}}
	return name, first
}

// filters turns a rule's (or backendRef's) filters into middlewares named
// "<owner>-f<i>-<type>", in order. failed reports a filter Gantry cannot
// apply: the spec requires such requests to fail (500), never to skip it.
// ptype and pval are the match's path (for ReplacePrefixMatch);
// listenerPort is the port of the listener (redirects without a port).
func (t *translator) filters(m routeMeta, owner string, fs []gwv1.HTTPRouteFilter, ptype gwv1.PathMatchType, pval string, listenerPort int, field string) (mws []string, failed bool) {
	for i, f := range fs {
		name := objName(owner, "f"+strconv.Itoa(i), strings.ToLower(string(f.Type)))
		fail := func(format string, a ...any) {
			t.problem(providers.SeverityError, m.kind, m.obj.Namespace, m.obj.Name, fmt.Sprintf("%s[%d]", field, i), format, a...)
			failed = true
		}
		var mw *config.Middleware
		switch f.Type {
		case gwv1.HTTPRouteFilterRequestHeaderModifier:
			if f.RequestHeaderModifier != nil {
				mw = &config.Middleware{RequestHeaderModifier: headerModifier(f.RequestHeaderModifier)}
			}
		case gwv1.HTTPRouteFilterResponseHeaderModifier:
			if f.ResponseHeaderModifier != nil {
				mw = &config.Middleware{ResponseHeaderModifier: headerModifier(f.ResponseHeaderModifier)}
			}
		case gwv1.HTTPRouteFilterRequestRedirect:
			rr := f.RequestRedirect
			if rr == nil {
				break
			}
			c := &config.RequestRedirect{Scheme: ptrOr(rr.Scheme, ""), Hostname: string(ptrOr(rr.Hostname, "")), StatusCode: ptrOr(rr.StatusCode, 302)}
			switch {
			case rr.Port != nil:
				c.Port = int(*rr.Port)
			case rr.Scheme == nil:
				c.Port = listenerPort
			}
			if !t.pathModifier(rr.Path, ptype, pval, &c.Path, &c.PathPrefix, &c.PathMatch) {
				fail("requestRedirect.path: ReplacePrefixMatch needs a PathPrefix match")
				continue
			}
			mw = &config.Middleware{RequestRedirect: c}
		case gwv1.HTTPRouteFilterURLRewrite:
			ur := f.URLRewrite
			if ur == nil {
				break
			}
			c := &config.URLRewrite{Hostname: string(ptrOr(ur.Hostname, ""))}
			if !t.pathModifier(ur.Path, ptype, pval, &c.Path, &c.PathPrefix, &c.PathMatch) {
				fail("urlRewrite.path: ReplacePrefixMatch needs a PathPrefix match")
				continue
			}
			if c.Hostname == "" && c.Path == nil && c.PathPrefix == nil {
				continue
			}
			mw = &config.Middleware{URLRewrite: c}
		case gwv1.HTTPRouteFilterRequestMirror:
			continue // a mirroring service (httpRule)
		case gwv1.HTTPRouteFilterCORS:
			if f.CORS != nil {
				mw = &config.Middleware{Headers: cors(f.CORS)}
			}
		case gwv1.HTTPRouteFilterExtensionRef:
			ref := f.ExtensionRef
			if ref == nil || ref.Group != "traefik.io" || ref.Kind != "Middleware" {
				fail("extensionRef: only traefik.io Middleware is supported")
				continue
			}
			mws = append(mws, objName(m.obj.Namespace, string(ref.Name))+"@"+CRDProvider)
			continue
		default:
			fail("filter type %q is not supported", f.Type)
			continue
		}
		if mw == nil {
			fail("filter %s has no %s block", f.Type, f.Type)
			continue
		}
		t.conf.HTTP.Middlewares[name] = mw
		mws = append(mws, name)
	}
	return mws, failed
}

// pathModifier fills the Path/PathPrefix/PathMatch fields of a redirect or
// rewrite; false when ReplacePrefixMatch comes without a PathPrefix match.
func (t *translator) pathModifier(pm *gwv1.HTTPPathModifier, ptype gwv1.PathMatchType, pval string, full, prefix **string, match *string) bool {
	if pm == nil {
		return true
	}
	switch pm.Type {
	case gwv1.FullPathHTTPPathModifier:
		*full = new(ptrOr(pm.ReplaceFullPath, "/"))
	case gwv1.PrefixMatchHTTPPathModifier:
		if ptype != gwv1.PathMatchPathPrefix {
			return false
		}
		*prefix = new(ptrOr(pm.ReplacePrefixMatch, "/"))
		*match = pval
	}
	return true
}

func headerModifier(f *gwv1.HTTPHeaderFilter) *config.HeaderModifier {
	hm := &config.HeaderModifier{Remove: f.Remove}
	for _, h := range f.Set {
		if hm.Set == nil {
			hm.Set = map[string]string{}
		}
		hm.Set[string(h.Name)] = h.Value
	}
	for _, h := range f.Add {
		if hm.Add == nil {
			hm.Add = map[string]string{}
		}
		hm.Add[string(h.Name)] = h.Value
	}
	return hm
}

// defaultCORSMaxAge is Access-Control-Max-Age when the CORS filter's
// maxAge is unset (Gateway API v1 HTTPCORSFilter.MaxAge: 5 seconds).
const defaultCORSMaxAge = 5

// cors maps the CORS filter (Gateway API v1 HTTPCORSFilter) onto the
// headers middleware's CORS options: an origin with a "*" becomes a
// regular expression so that the response names the request's origin (as
// the conformance tests expect); maxAge 0 (unset) is 5 s. The middleware
// answers a preflight with every configured header including
// Access-Control-Expose-Headers (HTTPRouteCORS conformance), and with
// allowCredentials echoes the request for a "*" method or header list and
// never sends a "*" expose list.
func cors(f *gwv1.HTTPCORSFilter) *config.Headers {
	maxAge := int64(f.MaxAge)
	if maxAge <= 0 {
		maxAge = defaultCORSMaxAge
	}
	h := &config.Headers{AccessControlAllowCredentials: ptrOr(f.AllowCredentials, false), AccessControlMaxAge: maxAge}
	for _, o := range f.AllowOrigins {
		s := string(o)
		if pre, post, ok := strings.Cut(s, "*"); ok {
			h.AccessControlAllowOriginListRegex = append(h.AccessControlAllowOriginListRegex, "^"+regexp.QuoteMeta(pre)+".*"+regexp.QuoteMeta(post)+"$")
			continue
		}
		h.AccessControlAllowOriginList = append(h.AccessControlAllowOriginList, s)
	}
	for _, v := range f.AllowMethods {
		h.AccessControlAllowMethods = append(h.AccessControlAllowMethods, string(v))
	}
	for _, v := range f.AllowHeaders {
		h.AccessControlAllowHeaders = append(h.AccessControlAllowHeaders, string(v))
	}
	for _, v := range f.ExposeHeaders {
		h.AccessControlExposeHeaders = append(h.AccessControlExposeHeaders, string(v))
	}
	return h
}

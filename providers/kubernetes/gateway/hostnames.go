package gateway

import (
	"regexp"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// hostMatches reports whether the concrete or wildcard hostname h is
// matched by the (possibly wildcard) pattern p: "*.example.com" matches
// any name with at least one more label ("a.example.com",
// "a.b.example.com"), not "example.com" (Gateway API Hostname).
func hostMatches(p, h string) bool {
	p, h = strings.ToLower(p), strings.ToLower(h)
	if !strings.HasPrefix(p, "*.") {
		return p == h
	}
	suffix := p[1:] // ".example.com"
	if strings.HasPrefix(h, "*.") {
		// A wildcard is matched by a wildcard at most as specific.
		return strings.HasSuffix(h[1:], suffix)
	}
	return len(h) > len(suffix) && strings.HasSuffix(h, suffix)
}

// intersect returns the hostnames a route with hostnames routeHosts serves
// on a listener with hostname lh (nil: any), and false when none remains
// (Accepted=False NoMatchingListenerHostname). An empty result with true
// means any host.
func intersect(lh *gwv1.Hostname, routeHosts []gwv1.Hostname) ([]string, bool) {
	if lh == nil || *lh == "" {
		out := make([]string, 0, len(routeHosts))
		for _, h := range routeHosts {
			out = append(out, strings.ToLower(string(h)))
		}
		return out, true
	}
	l := strings.ToLower(string(*lh))
	if len(routeHosts) == 0 {
		return []string{l}, true
	}
	var out []string
	for _, rh := range routeHosts {
		h := strings.ToLower(string(rh))
		switch {
		case hostMatches(l, h):
			out = append(out, h)
		case hostMatches(h, l):
			out = append(out, l)
		}
	}
	return dedupe(out), len(out) > 0
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// hostRule is the rule matcher for one hostname: Host for a concrete
// name, HostRegexp for a wildcard (suffix match over one or more labels).
func hostRule(h string) string {
	if strings.HasPrefix(h, "*.") {
		return "HostRegexp(" + quote(`^.+`+regexp.QuoteMeta(h[1:])+`$`) + ")"
	}
	return "Host(" + quote(h) + ")"
}

// hostClass is a hostname's precedence (Gateway API HTTPRoute hostnames:
// most characters in a matching non-wildcard hostname, then most
// characters in a matching hostname): exact is its length when the name
// is not a wildcard, else 0; chars is its length. No hostname: 0, 0.
type hostClass struct{ exact, chars int }

func classOf(h string) hostClass {
	if h == "" {
		return hostClass{}
	}
	if strings.HasPrefix(h, "*.") {
		return hostClass{0, len(h)}
	}
	return hostClass{len(h), len(h)}
}

// moreSpecific reports whether listener hostname o takes precedence over
// listener hostname l (nil: none) for the hosts both match, so that l's
// routes must leave o's hosts to o (listener isolation).
func moreSpecific(o string, l *gwv1.Hostname) bool {
	if l == nil || *l == "" {
		return true
	}
	ls := strings.ToLower(string(*l))
	if o == ls || !hostMatches(ls, o) {
		return false
	}
	co, cl := classOf(o), classOf(ls)
	return co.exact > cl.exact || (co.exact == cl.exact && co.chars > cl.chars)
}

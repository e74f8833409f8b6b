package router

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzCompileRule checks that compiling any rule in either syntax never
// panics, and that a compiled rule evaluates (and explains) the same
// verdict on a few requests without panicking.
func FuzzCompileRule(f *testing.F) {
	for _, s := range []string{
		"Host(`a.example`) && PathPrefix(`/api`)",
		"Host(`*.example.com`) || Host(`*`)",
		"HostRegexp(`{sub:[a-z]+}.example.com`)",
		"Query(`k`) && QueryRegexp(`id`, `^[0-9]+$`) && !ClientIP(`10.0.0.0/8`)",
		"Header(`X`, `1`) || HeaderRegexp(`Host`, `.*`) || Method(`get`)",
		"Path(`/route/{id:[0-9]+}`) && Headers(`a`, `b`)",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	reqs := []*http.Request{
		req("GET", "http://a.example/api?k&id=1"),
		req("POST", "http://x.example.com/route/%7Bid%7D%2F?q=%zz", "X: 1"),
		hostless(),
	}
	f.Fuzz(func(t *testing.T, rule string, v2 bool) {
		syntax := "v3"
		if v2 {
			syntax = "v2"
		}
		c, err := compileRule(rule, syntax)
		if err != nil {
			return
		}
		hs := hostsOf(c.root)
		for _, r := range reqs {
			in := newInput(r)
			got := c.root.match(&in)
			if ok, _ := c.root.explain(&in); ok != got {
				t.Fatalf("%s: match %v but explain %v", rule, got, ok)
			}
			// The index invariant: a rule with a host set only matches
			// hosts in that set.
			if got && hs != nil && !inHostSet(hs, in.host) {
				t.Fatalf("%s matched host %q outside its host set %+v", rule, in.host, *hs)
			}
		}
	})
}

func inHostSet(hs *hostSet, host string) bool {
	for _, h := range hs.exact {
		if h == host {
			return true
		}
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		for _, w := range hs.wild {
			if host[i+1:] == w {
				return true
			}
		}
	}
	return false
}

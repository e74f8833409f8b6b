package router

import (
	"fmt"
	"net/http"
)

// Explanation is the route simulator's answer for one request: which
// router would serve it and why each candidate did or did not match.
type Explanation struct {
	EntryPoint string `json:"entryPoint"`
	// TLS says which routers were considered: those with a tls block (true)
	// or those without (false), as decided by r.TLS.
	TLS bool `json:"tls"`
	// Host and Path are what the matchers saw: the canonical host and the
	// routing path.
	Host string `json:"host"`
	Path string `json:"path"`
	// Winner is the qualified name of the router that serves the request;
	// "" when none matches (the request gets 404).
	Winner string `json:"winner"`
	// Candidates are the routers evaluated, in evaluation order, ending at
	// the winner. Routers the host index ruled out are not listed.
	Candidates []Candidate `json:"candidates"`
	// Error is set when the request cannot be routed at all (unknown
	// entrypoint).
	Error string `json:"error,omitempty"`
}

// Candidate is one router considered for a request.
type Candidate struct {
	Router   string `json:"router"`
	Rule     string `json:"rule"`
	Priority int    `json:"priority"`
	Matched  bool   `json:"matched"`
	// Reason is a human sentence: "matched", or the first matcher that
	// failed, e.g. "Host(`a.example`) did not match host b.example".
	Reason string `json:"reason"`
}

// Explain simulates routing r on entryPoint with the same index and
// matchers the handler uses. It may allocate and is meant for the
// dashboard, not the request path.
func (t *Table) Explain(entryPoint string, r *http.Request) *Explanation {
	x := &Explanation{EntryPoint: entryPoint, TLS: r.TLS != nil, Candidates: []Candidate{}}
	e, ok := t.eps[entryPoint]
	if !ok {
		x.Error = fmt.Sprintf("entrypoint %q does not exist", entryPoint)
		return x
	}
	in := newInput(r)
	x.Host, x.Path = in.host, in.path
	m := e.mux(r)
	var ls lists
	m.candidates(&in, &ls)
	for rt := first(&ls); rt != nil; rt = first(&ls) {
		if rt.guarded && !rt.admits(in.regexpHost()) {
			continue // its HostRegexp cannot match: not a candidate
		}
		ok, why := rt.m.explain(&in)
		if ok {
			why = "matched"
		}
		x.Candidates = append(x.Candidates, Candidate{Router: rt.name, Rule: rt.rule, Priority: rt.priority, Matched: ok, Reason: why})
		if ok {
			x.Winner = rt.name
			break
		}
	}
	return x
}

// explain evaluates n like match and, when it is false, says why; when it
// is true under a Not, says what matched.
func (n *node) explain(in *input) (bool, string) {
	switch n.kind {
	case kAnd:
		if ok, why := n.l.explain(in); !ok {
			return false, why
		}
		return n.r.explain(in)
	case kOr:
		okL, whyL := n.l.explain(in)
		if okL {
			return true, whyL
		}
		okR, whyR := n.r.explain(in)
		if okR {
			return true, whyR
		}
		return false, whyL + ", and " + whyR
	case kNot:
		ok, why := n.l.explain(in)
		if ok {
			return false, "negated: " + why
		}
		return true, why
	}
	if n.match(in) {
		return true, n.text + " matched " + n.subject(in)
	}
	return false, n.text + " did not match " + n.subject(in)
}

// subject describes what a leaf looked at, for Explain's reasons.
func (n *node) subject(in *input) string {
	switch n.kind {
	case kHost, kHostWild, kHostAny, kHostRe:
		if in.host == "" {
			return "an empty host"
		}
		if n.kind == kHostRe {
			return "host " + in.regexpHost()
		}
		return "host " + in.host
	case kPath, kPathPrefix, kPathRe:
		return "path " + in.path
	case kMethod:
		return "method " + in.r.Method
	case kHeader, kHeaderRe:
		return fmt.Sprintf("header %s %q", n.s, in.r.Header.Values(n.s))
	case kQuery, kQueryRe:
		if in.r.URL == nil {
			return "an empty query"
		}
		return fmt.Sprintf("query %q", in.r.URL.RawQuery)
	case kClientIP:
		return "client address " + in.r.RemoteAddr
	}
	return "the request"
}

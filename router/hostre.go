package router

import (
	"regexp/syntax"
	"strings"
)

// hostLiterals is what a HostRegexp requires of the host it matches: it
// starts with pre and ends with suf (either may be empty).
type hostLiterals struct{ pre, suf string }

// domain returns the last one to reDepth labels of the domain every host
// the pattern matches ends with, after a dot: for suf ".example.com" or
// "-canary.example.com", "example.com"; "" when suf has no dot, or ends
// with one (a trailing-dot host is not indexed).
func (l hostLiterals) domain() string {
	i := strings.IndexByte(l.suf, '.')
	if i < 0 || strings.HasSuffix(l.suf, ".") {
		return ""
	}
	d := l.suf[i+1:]
	for end, n := len(d), 0; ; n++ {
		j := strings.LastIndexByte(d[:end], '.')
		if j < 0 {
			return d
		}
		if n+1 == reDepth {
			return d[j+1:]
		}
		end = j
	}
}

// hostReOf returns the literals a matcher tree's HostRegexp requires of
// every request it matches, and false when there is none to use: a
// HostRegexp, or an && with one (the side with the longer literals), and
// nothing under || or !.
func hostReOf(n *node) (hostLiterals, bool) {
	switch n.kind {
	case kHostRe:
		l := literalsOf(n.re.String())
		return l, l.pre != "" || l.suf != ""
	case kAnd:
		l, lok := hostReOf(n.l)
		r, rok := hostReOf(n.r)
		switch {
		case !lok:
			return r, rok
		case !rok:
			return l, lok
		case len(r.pre)+len(r.suf) > len(l.pre)+len(l.suf):
			return r, true
		}
		return l, true
	}
	return hostLiterals{}, false
}

// literalsOf returns the literal text a pattern's match must start with
// when it is anchored at the start (^ or \A), and end with when anchored
// at the end ($ without (?m), or \z). Case-folded literals are lower-cased:
// the host is.
func literalsOf(pat string) hostLiterals {
	re, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return hostLiterals{}
	}
	re = re.Simplify()
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var out hostLiterals
	if len(subs) > 1 && subs[0].Op == syntax.OpBeginText {
		var b strings.Builder
		for _, s := range subs[1:] {
			t, ok := literal(s)
			if !ok {
				break
			}
			b.WriteString(t)
		}
		out.pre = b.String()
	}
	if n := len(subs); n > 1 && subs[n-1].Op == syntax.OpEndText {
		var parts []string
		for i := n - 2; i >= 0; i-- {
			t, ok := literal(subs[i])
			if !ok {
				break
			}
			parts = append(parts, t)
		}
		var b strings.Builder
		for i := len(parts) - 1; i >= 0; i-- {
			b.WriteString(parts[i])
		}
		out.suf = b.String()
	}
	return out
}

// literal is an OpLiteral's text, lower-cased when it folds case; false
// for anything else, and for a case-folded k or s, which also match the
// Kelvin sign and the long s.
func literal(s *syntax.Regexp) (string, bool) {
	if s.Op != syntax.OpLiteral {
		return "", false
	}
	t := string(s.Rune)
	if s.Flags&syntax.FoldCase != 0 {
		t = strings.ToLower(t)
		if strings.ContainsAny(t, "ks") {
			return "", false
		}
	}
	return t, true
}

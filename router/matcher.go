package router

import (
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"

	"github.com/gantry-proxy/gantry/config/rule"
)

// kind is the type of a matcher node.
type kind uint8

const (
	kAnd        kind = iota
	kOr              // l || r
	kNot             // !l
	kHost            // s: canonical host, exact
	kHostWild        // s: the suffix of "*.suffix": one extra non-empty label
	kHostAny         // Host(`*`): everything, even no host
	kHostRe          // re on the canonical host
	kPath            // s: exact routing path
	kPathPrefix      // s: prefix of the routing path
	kPathRe          // re on the routing path
	kMethod          // s: method, upper-case
	kHeader          // s: canonical key, s2: value
	kHeaderRe        // s: canonical key, re on each value
	kQuery           // s: key, s2: value; any: any value
	kQueryRe         // s: key, re on each value
	kClientIP        // pfx contains the peer address
)

// node is one compiled matcher. A tree of nodes is immutable once built
// and evaluated without allocating (see match).
type node struct {
	kind kind
	l, r *node
	s    string
	s2   string
	any  bool
	re   *regexp.Regexp
	pfx  netip.Prefix
	text string // the matcher as written in canonical syntax, for Explain
}

// match evaluates n against one request.
func (n *node) match(in *input) bool {
	switch n.kind {
	case kAnd:
		return n.l.match(in) && n.r.match(in)
	case kOr:
		return n.l.match(in) || n.r.match(in)
	case kNot:
		return !n.l.match(in)
	case kHost:
		return in.host != "" && in.host == n.s
	case kHostWild:
		i := strings.IndexByte(in.host, '.')
		return i > 0 && in.host[i+1:] == n.s
	case kHostAny:
		return true
	case kHostRe:
		return n.re.MatchString(in.regexpHost())
	case kPath:
		return in.path == n.s
	case kPathPrefix:
		return strings.HasPrefix(in.path, n.s)
	case kPathRe:
		return n.re.MatchString(in.path)
	case kMethod:
		return in.r.Method == n.s
	case kHeader:
		for _, v := range in.r.Header[n.s] {
			if v == n.s2 {
				return true
			}
		}
		return false
	case kHeaderRe:
		for _, v := range in.r.Header[n.s] {
			if n.re.MatchString(v) {
				return true
			}
		}
		return false
	case kQuery:
		return in.r.URL != nil && queryMatch(in.r.URL.RawQuery, n.s, n.s2, nil, n.any)
	case kQueryRe:
		return in.r.URL != nil && queryMatch(in.r.URL.RawQuery, n.s, "", n.re, false)
	case kClientIP:
		a, ok := peerAddr(in.r.RemoteAddr)
		return ok && n.pfx.Contains(a)
	}
	return false
}

// peerAddr parses the peer address of r.RemoteAddr ("ip:port" or "ip"),
// unmapping IPv4-in-IPv6. X-Forwarded-For is never consulted (Traefik
// ClientIP uses RemoteAddrStrategy).
func peerAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// spelled returns the canonical matcher name for name, accepting exactly
// the spellings Traefik registers (rules/parser.go): as documented
// ("HostRegexp"), lower-case, upper-case and capitalised ("Hostregexp").
func spelled(name string, known []string) (string, bool) {
	for _, k := range known {
		low := strings.ToLower(k)
		if name == k || name == low || name == strings.ToUpper(k) || name == strings.ToUpper(low[:1])+low[1:] {
			return k, true
		}
	}
	return "", false
}

// arity is the allowed argument count of a matcher.
type arity struct{ min, max int }

func (a arity) String() string {
	switch {
	case a.max < 0:
		return fmt.Sprintf("at least %d argument%s", a.min, plural(a.min))
	case a.min == a.max:
		return fmt.Sprintf("%d argument%s", a.min, plural(a.min))
	}
	return fmt.Sprintf("%d or %d arguments", a.min, a.max)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (a arity) check(c *rule.Tree, name string) error {
	if n := len(c.Args); n < a.min || (a.max >= 0 && n > a.max) {
		return rule.Errorf(c.Pos, "%s: expected %s, got %d", name, a, n)
	}
	return nil
}

// v3Matchers are the HTTP matchers of Traefik v3 and their argument counts
// (https://doc.traefik.io/traefik/routing/routers/#rule, pkg/muxer/http/matcher.go).
var v3Matchers = map[string]arity{
	"Host": {1, 1}, "HostRegexp": {1, 1},
	"Path": {1, 1}, "PathPrefix": {1, 1}, "PathRegexp": {1, 1},
	"Method": {1, 1}, "Header": {2, 2}, "HeaderRegexp": {2, 2},
	"Query": {1, 2}, "QueryRegexp": {1, 2}, "ClientIP": {1, 1},
}

var v3Names = []string{"Host", "HostRegexp", "Path", "PathPrefix", "PathRegexp", "Method", "Header", "HeaderRegexp", "Query", "QueryRegexp", "ClientIP"}

// compiled is a parsed and compiled rule.
type compiled struct {
	root     *node
	warnings []string // usable, but probably not what was meant
}

// compileRule parses and compiles rule in syntax "v3" (or "") or "v2".
// Errors are *rule.Error values giving the byte offset and the reason.
func compileRule(src, syntax string) (*compiled, error) {
	t, err := rule.Parse(src)
	if err != nil {
		return nil, err
	}
	c := &compiled{}
	if syntax == "v2" {
		c.root, err = c.v2(t)
	} else {
		c.root, err = c.v3(t)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// tree compiles the operators of t and hands calls to leaf.
func (c *compiled) tree(t *rule.Tree, leaf func(*rule.Tree) (*node, error)) (*node, error) {
	switch t.Op {
	case rule.Call:
		return leaf(t)
	case rule.Not:
		x, err := c.tree(t.Left, leaf)
		if err != nil {
			return nil, err
		}
		return &node{kind: kNot, l: x}, nil
	}
	l, err := c.tree(t.Left, leaf)
	if err != nil {
		return nil, err
	}
	r, err := c.tree(t.Right, leaf)
	if err != nil {
		return nil, err
	}
	k := kAnd
	if t.Op == rule.Or {
		k = kOr
	}
	return &node{kind: k, l: l, r: r}, nil
}

func (c *compiled) v3(t *rule.Tree) (*node, error) {
	return c.tree(t, c.v3leaf)
}

func (c *compiled) v3leaf(t *rule.Tree) (*node, error) {
	name, ok := spelled(t.Name, v3Names)
	if !ok {
		hint := ""
		if v2, ok := spelled(t.Name, []string{"Headers", "HeadersRegexp", "HostHeader"}); ok {
			hint = fmt.Sprintf(" (%s is v2 syntax; use %s or set ruleSyntax v2)", v2, map[string]string{"Headers": "Header", "HeadersRegexp": "HeaderRegexp", "HostHeader": "Host"}[v2])
		}
		return nil, rule.Errorf(t.Pos, "unknown matcher %s%s; known: %s", t.Name, hint, strings.Join(v3Names, ", "))
	}
	if err := v3Matchers[name].check(t, name); err != nil {
		return nil, err
	}
	n, err := leafNode(t, name, t.Args)
	if err != nil {
		return nil, err
	}
	v := t.Args[0]
	switch name {
	case "Path", "PathPrefix":
		if strings.Contains(v, "{") && strings.Contains(v, "}") {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: braces are literal in v3 syntax; use PathRegexp, or ruleSyntax v2 for {placeholders}", n.text))
		}
	case "Header", "HeaderRegexp":
		// Go moves Host out of the header map, so like Traefik's this never
		// matches; say so rather than leave a silent 404.
		if n.s == "Host" {
			c.warnings = append(c.warnings, fmt.Sprintf("%s never matches: Host is not in the request headers; use Host or HostRegexp", n.text))
		}
	case "Host":
		// The request's host is compared without its port, so a port in
		// the rule never matches (case 005); Traefik is silent about it.
		if hostHasPort(v) {
			c.warnings = append(c.warnings, fmt.Sprintf("%s never matches: the request's host is compared without its port; remove the port (the entrypoint selects it)", n.text))
		}
	case "HostRegexp":
		if strings.Contains(v, "{") && strings.Contains(v, ":") && strings.Contains(v, "}") {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: v3 HostRegexp is a plain Go regexp, {name:re} placeholders are v2 syntax and match literally", n.text))
		}
	}
	return n, nil
}

// leafNode builds the node for one matcher call with canonical name and
// one value (two for Header, HeaderRegexp, Query, QueryRegexp).
func leafNode(t *rule.Tree, name string, args []string) (*node, error) {
	n := &node{text: name + "(" + quoteArgs(args) + ")"}
	bad := func(format string, a ...any) error {
		return rule.Errorf(t.Pos, "%s: %s", name, fmt.Sprintf(format, a...))
	}
	v := args[0]
	switch name {
	case "Host":
		if !isASCII(v) {
			return nil, bad("non-ASCII host %q; use its punycode form", v)
		}
		h := strings.TrimSuffix(strings.ToLower(v), ".")
		switch {
		case h == "":
			return nil, bad("empty host")
		case h == "*":
			n.kind = kHostAny
		case strings.HasPrefix(h, "*.") && len(h) > 2:
			n.kind, n.s = kHostWild, h[2:]
		default:
			n.kind, n.s = kHost, h
		}
	case "HostRegexp", "PathRegexp", "HeaderRegexp", "QueryRegexp":
		pat := v
		if len(args) == 2 {
			pat = args[1]
		}
		if name == "HostRegexp" && !isASCII(pat) {
			return nil, bad("non-ASCII pattern %q; use punycode", pat)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, bad("%v", err)
		}
		n.re = re
		switch name {
		case "HostRegexp":
			n.kind = kHostRe
		case "PathRegexp":
			n.kind = kPathRe
		case "HeaderRegexp":
			n.kind, n.s = kHeaderRe, http.CanonicalHeaderKey(v)
		case "QueryRegexp":
			if len(args) == 1 {
				n.kind, n.s, n.re = kQuery, v, nil
			} else {
				n.kind, n.s = kQueryRe, v
			}
		}
	case "Path", "PathPrefix":
		if !strings.HasPrefix(v, "/") {
			return nil, bad("path %q must start with /", v)
		}
		n.kind, n.s = kPath, v
		if name == "PathPrefix" {
			n.kind = kPathPrefix
		}
	case "Method":
		if v == "" {
			return nil, bad("empty method")
		}
		n.kind, n.s = kMethod, strings.ToUpper(v)
	case "Header":
		n.kind, n.s, n.s2 = kHeader, http.CanonicalHeaderKey(v), args[1]
	case "Query":
		n.kind, n.s = kQuery, v
		if len(args) == 2 {
			n.s2 = args[1]
		}
	case "ClientIP":
		p, err := parsePrefix(v)
		if err != nil {
			return nil, bad("%v", err)
		}
		n.kind, n.pfx = kClientIP, p
	default:
		return nil, bad("not supported")
	}
	return n, nil
}

// parsePrefix parses an IPv4 or IPv6 address (a one-address prefix) or a
// CIDR; IPv4-in-IPv6 forms are unmapped to IPv4.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = rule.Quote(a)
	}
	return strings.Join(q, ", ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hostHasPort reports whether a Host() value carries a port:
// "example.com:8443", "[::1]:8080" (not an IPv6 literal alone).
func hostHasPort(h string) bool {
	if strings.HasPrefix(h, "[") {
		return strings.Contains(h, "]:")
	}
	return strings.Count(h, ":") == 1
}

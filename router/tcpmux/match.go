package tcpmux

import (
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/rule"
)

// ConnData is what a TCP rule can look at: the SNI of the ClientHello
// (lower-cased, "" without TLS or SNI), the client's IP (after PROXY
// protocol) and the ALPN protocols the client offered.
type ConnData struct {
	ServerName string
	ClientIP   netip.Addr
	ALPN       []string
	// ACMEChallenge is set for a TLS-ALPN-01 validation hello Gantry
	// answers itself (ALPN acme-tls/1, a challenge pending for the SNI,
	// no allowACMEByPass): it goes to the HTTPS side, whose certificate
	// store answers it. Any other acme-tls/1 hello is routed as usual, so
	// an ACME client behind a passthrough router validates through it.
	ACMEChallenge bool
}

// Matcher reports whether a connection matches a compiled rule.
type Matcher func(*ConnData) bool

// hostOrIP is what HostSNI accepts besides "*" (Traefik matcher.go).
var hostOrIP = regexp.MustCompile(`^(\*\.)?[[:word:]\.\-\:]+$`)

// Compile parses a TCP rule in Traefik v3 syntax. catchAll is true for a
// rule that is exactly HostSNI(`*`) (Traefik's catchAll route, tried after
// every specific one). Every matcher takes exactly one argument; an ALPN of
// acme-tls/1 is refused, as in Traefik. Errors give the offset.
func Compile(src string) (m Matcher, catchAll bool, err error) {
	t, err := rule.Parse(src)
	if err != nil {
		return nil, false, err
	}
	m, err = compile(t)
	if err != nil {
		return nil, false, err
	}
	catchAll = t.Op == rule.Call && t.Name == "HostSNI" && len(t.Args) == 1 && t.Args[0] == "*"
	return m, catchAll, nil
}

func compile(t *rule.Tree) (Matcher, error) {
	switch t.Op {
	case rule.Not:
		x, err := compile(t.Left)
		if err != nil {
			return nil, err
		}
		return func(c *ConnData) bool { return !x(c) }, nil
	case rule.And, rule.Or:
		l, err := compile(t.Left)
		if err != nil {
			return nil, err
		}
		r, err := compile(t.Right)
		if err != nil {
			return nil, err
		}
		if t.Op == rule.And {
			return func(c *ConnData) bool { return l(c) && r(c) }, nil
		}
		return func(c *ConnData) bool { return l(c) || r(c) }, nil
	}
	if len(t.Args) != 1 {
		return nil, rule.Errorf(t.Pos, "%s: expected 1 argument, got %d", t.Name, len(t.Args))
	}
	arg := t.Args[0]
	switch t.Name {
	case "HostSNI":
		if arg == "*" {
			return func(*ConnData) bool { return true }, nil
		}
		if !hostOrIP.MatchString(arg) {
			return nil, rule.Errorf(t.Pos, "HostSNI: %q is not a valid hostname", arg)
		}
		host := strings.ToLower(strings.TrimSuffix(arg, "."))
		if wild, ok := strings.CutPrefix(host, "*."); ok {
			// "*.example.com" matches exactly one more label.
			suffix := "." + wild
			return func(c *ConnData) bool {
				n, ok := strings.CutSuffix(c.ServerName, suffix)
				return ok && n != "" && !strings.Contains(n, ".")
			}, nil
		}
		return func(c *ConnData) bool { return c.ServerName != "" && c.ServerName == host }, nil
	case "HostSNIRegexp":
		for i := range len(arg) {
			if arg[i] >= 0x80 {
				return nil, rule.Errorf(t.Pos, "HostSNIRegexp: %q is not ASCII", arg)
			}
		}
		re, err := regexp.Compile(arg)
		if err != nil {
			return nil, rule.Errorf(t.Pos, "HostSNIRegexp: %v", err)
		}
		return func(c *ConnData) bool { return re.MatchString(c.ServerName) }, nil
	case "ClientIP":
		p, err := config.ParseIPRange(arg)
		if err != nil {
			return nil, rule.Errorf(t.Pos, "ClientIP: %v", err)
		}
		return func(c *ConnData) bool { return c.ClientIP.IsValid() && p.Contains(c.ClientIP.Unmap()) }, nil
	case "ALPN":
		if arg == "acme-tls/1" {
			return nil, rule.Errorf(t.Pos, "ALPN: %q is reserved for ACME challenges", arg)
		}
		return func(c *ConnData) bool { return slices.Contains(c.ALPN, arg) }, nil
	}
	return nil, rule.Errorf(t.Pos, "unknown TCP matcher %s (want HostSNI, HostSNIRegexp, ClientIP or ALPN)", t.Name)
}

// Priority is the default priority of a TCP rule: its length in bytes,
// except -1 for a lone HostSNI(`*`) (Traefik GetRulePriority).
func Priority(src string, catchAll bool) int {
	if catchAll {
		return -1
	}
	return len(src)
}

// SNIHosts returns the names a TCP rule's connections must have as SNI
// (lower-cased; "*.example.com" for a wildcard), or ok false when the
// rule can match some connection whatever its SNI (HostSNI(`*`), ClientIP
// or ALPN alone, a negation, HostSNIRegexp): the HostSNI names under &&
// (the smaller side's when both have some) and ||.
func SNIHosts(src string) (hosts []string, ok bool) {
	t, err := rule.Parse(src)
	if err != nil {
		return nil, false
	}
	return sniHosts(t)
}

func sniHosts(t *rule.Tree) ([]string, bool) {
	switch t.Op {
	case rule.And:
		l, lok := sniHosts(t.Left)
		r, rok := sniHosts(t.Right)
		switch {
		case !lok:
			return r, rok
		case !rok || len(l) <= len(r):
			return l, true
		}
		return r, true
	case rule.Or:
		l, lok := sniHosts(t.Left)
		r, rok := sniHosts(t.Right)
		if !lok || !rok {
			return nil, false
		}
		return append(slices.Clip(l), r...), true
	case rule.Call:
		if t.Name == "HostSNI" && len(t.Args) == 1 && t.Args[0] != "*" {
			return []string{strings.ToLower(strings.TrimSuffix(t.Args[0], "."))}, true
		}
	}
	return nil, false
}

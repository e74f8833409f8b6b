// Package entrypoints opens and closes the listeners providers ask for
// (Gantry's dynamic entrypoints, traefik/traefik#6551): a Docker label or
// Consul tag gantry.entrypoints.<name>.address, or entryPoints.<name> in a
// dynamic file, honoured only inside the static configuration's
// dynamicEntryPoints.allowed. A Manager is told each merged configuration
// before its routes are swapped in (Open binds what is new) and after
// (Retire closes, with the grace period, what no provider asks for any
// more).
package entrypoints

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
)

// Range is one entry of dynamicEntryPoints.allowed: a protocol, an IP (the
// zero Addr: any address, the wildcard included) and an inclusive port
// range.
type Range struct {
	UDP      bool
	IP       netip.Addr
	From, To uint16
	text     string
}

// String returns the entry as written.
func (r Range) String() string { return r.text }

// ParseAllowed parses dynamicEntryPoints.allowed, each entry
// "[tcp:|udp:][ip:]port[-port]" ("8000-8099", "127.0.0.1:9000",
// "udp:[::1]:5300-5310"). Errors name the entry's index and text.
func ParseAllowed(list []string) ([]Range, error) {
	var out []Range
	var errs []error
	for i, s := range list {
		r, err := parseRange(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("dynamicEntryPoints.allowed[%d] %q: %w", i, s, err))
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

func parseRange(s string) (Range, error) {
	r := Range{text: s}
	rest := s
	if p, tail, ok := strings.Cut(s, ":"); ok {
		switch strings.ToLower(p) {
		case "tcp":
			rest = tail
		case "udp":
			r.UDP, rest = true, tail
		}
	}
	ports := rest
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host := strings.TrimSuffix(strings.TrimPrefix(rest[:i], "["), "]")
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return r, fmt.Errorf("want [tcp:|udp:][ip:]port[-port]: %q is not an IP address", rest[:i])
		}
		r.IP, ports = ip.Unmap(), rest[i+1:]
	}
	lo, hi, isRange := strings.Cut(ports, "-")
	from, err := parsePort(lo)
	if err != nil {
		return r, err
	}
	to := from
	if isRange {
		if to, err = parsePort(hi); err != nil {
			return r, err
		}
	}
	if to < from {
		return r, fmt.Errorf("port range %d-%d is empty", from, to)
	}
	r.From, r.To = from, to
	return r, nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a port (1-65535)", s)
	}
	return uint16(n), nil
}

// address is a requested listener address, parsed.
type address struct {
	udp  bool
	ip   netip.Addr // zero: every address
	port uint16
	raw  string // as written
}

// listen returns the address to bind, "ip:port" or ":port".
func (a address) listen() string {
	host := ""
	if a.ip.IsValid() {
		host = a.ip.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(int(a.port)))
}

// key identifies the listener: two requests with equal keys are one.
func (a address) key() string {
	if a.udp {
		return a.listen() + "/udp"
	}
	return a.listen() + "/tcp"
}

// parseAddress reads "[ip]:port[/tcp|/udp]". The host must be empty or an
// IP literal (a name would make the allow-list depend on DNS) and the port
// a number (0 is refused: the operator permits ports, not "any").
func parseAddress(s string) (address, error) {
	a := address{raw: s}
	hp, proto, hasProto := strings.Cut(s, "/")
	switch {
	case !hasProto || strings.EqualFold(proto, "tcp"):
	case strings.EqualFold(proto, "udp"):
		a.udp = true
	default:
		return a, fmt.Errorf("address %q: want tcp or udp, not %s", s, proto)
	}
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return a, fmt.Errorf("address %q: want [ip]:port[/tcp|/udp]", s)
	}
	if host != "" {
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return a, fmt.Errorf("address %q: the host must be empty or an IP address", s)
		}
		a.ip = ip.Unmap()
	}
	if a.port, err = parsePort(port); err != nil {
		return a, fmt.Errorf("address %q: %w", s, err)
	}
	return a, nil
}

// permits reports whether r allows a.
func (r Range) permits(a address) bool {
	if r.UDP != a.udp || a.port < r.From || a.port > r.To {
		return false
	}
	return !r.IP.IsValid() || r.IP == a.ip
}

// CheckTemplate refuses the options of dynamicEntryPoints.template that
// are keyed by entrypoint name elsewhere and so cannot follow a dynamic
// entrypoint, and an address (each request brings its own).
func CheckTemplate(t *static.EntryPoint) error {
	if t == nil {
		return nil
	}
	h := t.HTTP
	if h == nil {
		h = &static.EntryHTTP{}
	}
	var bad []string
	for _, o := range []struct {
		set  bool
		name string
	}{
		{t.Address != "", "address (each provider's request gives it)"},
		{t.AsDefault, "asDefault (a dynamic entrypoint only serves the routers that name it)"},
		{len(h.Middlewares) > 0, "http.middlewares"}, {h.TLS != nil, "http.tls"},
		{h.Redirections != nil, "http.redirections"}, {h.NotFound != nil, "http.notFound"},
	} {
		if o.set {
			bad = append(bad, o.name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("dynamicEntryPoints.template: %s cannot be set here", strings.Join(bad, ", "))
	}
	return nil
}

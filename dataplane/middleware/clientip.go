package middleware

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// ipStrategy picks the client IP of a request, as Traefik's ipStrategy:
// https://doc.traefik.io/traefik/middlewares/http/ipallowlist/#ipstrategy
//
//   - depth > 0: the depth-th address from the right of X-Forwarded-For
//     (empty when the header has fewer);
//   - excluded set: the rightmost X-Forwarded-For address not in excluded;
//   - otherwise: the peer address (r.RemoteAddr).
//
// ipv6Subnet, when set, masks an IPv6 result to that prefix length, so all
// addresses of one subnet count as one client. X-Forwarded-For is trusted
// as seen: the dataplane removes it for peers that are not trusted proxies
// before any middleware runs.
type ipStrategy struct {
	depth    int
	excluded []netip.Prefix
	v6Bits   int // -1: no masking
}

// newIPStrategy validates c (nil is the peer-address strategy).
func newIPStrategy(c *config.IPStrategy, field string) (*ipStrategy, error) {
	s := &ipStrategy{v6Bits: -1}
	if c == nil {
		return s, nil
	}
	if c.Depth < 0 {
		return nil, errField(field+".depth", "%d is negative", c.Depth)
	}
	s.depth = c.Depth
	var err error
	if s.excluded, err = parseEach(field+".excludedIPs", c.ExcludedIPs, config.ParseIPRange); err != nil {
		return nil, err
	}
	if c.IPv6Subnet != nil {
		if *c.IPv6Subnet < 0 || *c.IPv6Subnet > 128 {
			return nil, errField(field+".ipv6Subnet", "%d is not within 0-128", *c.IPv6Subnet)
		}
		s.v6Bits = *c.IPv6Subnet
	}
	return s, nil
}

// clientIP returns the chosen address, or an invalid Addr when there is none.
func (s *ipStrategy) clientIP(r *http.Request) netip.Addr {
	var a netip.Addr
	switch {
	case s.depth > 0:
		a = xffFromRight(r, s.depth)
	case len(s.excluded) > 0:
		a = xffNotExcluded(r, s.excluded)
	default:
		a = remoteIP(r)
	}
	if a.IsValid() && s.v6Bits >= 0 && a.Is6() && !a.Is4In6() {
		if p, err := a.Prefix(s.v6Bits); err == nil {
			a = p.Addr()
		}
	}
	return a
}

// remoteIP parses r.RemoteAddr ("ip:port" or a bare ip).
func remoteIP(r *http.Request) netip.Addr {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// xffFromRight returns the depth-th address from the right of the
// X-Forwarded-For values (all header lines joined, as one list).
func xffFromRight(r *http.Request, depth int) netip.Addr {
	vals := r.Header.Values("X-Forwarded-For")
	for i := len(vals) - 1; i >= 0; i-- {
		v := vals[i]
		for {
			j := strings.LastIndexByte(v, ',')
			depth--
			if depth == 0 {
				return parseIP(v[j+1:])
			}
			if j < 0 {
				break
			}
			v = v[:j]
		}
	}
	return netip.Addr{}
}

// xffNotExcluded returns the rightmost X-Forwarded-For address not in excluded.
func xffNotExcluded(r *http.Request, excluded []netip.Prefix) netip.Addr {
	vals := r.Header.Values("X-Forwarded-For")
	for i := len(vals) - 1; i >= 0; i-- {
		parts := strings.Split(vals[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a := parseIP(parts[j])
			if !a.IsValid() {
				continue
			}
			if !inRanges(a, excluded) {
				return a
			}
		}
	}
	return netip.Addr{}
}

func parseIP(s string) netip.Addr {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func inRanges(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// sourceFunc appends to buf the key a limit counts a request by and
// returns it; callers index maps with string(key), which does not allocate.
type sourceFunc func(r *http.Request, buf []byte) []byte

// newSource builds the sourceCriterion of rateLimit and inFlightReq: at
// most one of ipStrategy, requestHeaderName and requestHost; none means the
// peer IP. The IP is formatted canonically; a request without a usable IP
// counts under the empty key.
// Source: https://doc.traefik.io/traefik/middlewares/http/ratelimit/#sourcecriterion
func newSource(c *config.SourceCriterion) (sourceFunc, error) {
	if c == nil {
		s, _ := newIPStrategy(nil, "")
		return ipSource(s), nil
	}
	n := 0
	if c.IPStrategy != nil {
		n++
	}
	if c.RequestHeaderName != "" {
		n++
	}
	if c.RequestHost {
		n++
	}
	if n > 1 {
		return nil, errField("sourceCriterion", "set only one of ipStrategy, requestHeaderName, requestHost")
	}
	switch {
	case c.RequestHeaderName != "":
		h := http.CanonicalHeaderKey(c.RequestHeaderName)
		return func(r *http.Request, buf []byte) []byte { return append(buf, r.Header.Get(h)...) }, nil
	case c.RequestHost:
		return func(r *http.Request, buf []byte) []byte { return append(buf, r.Host...) }, nil
	}
	s, err := newIPStrategy(c.IPStrategy, "sourceCriterion.ipStrategy")
	if err != nil {
		return nil, err
	}
	return ipSource(s), nil
}

func ipSource(s *ipStrategy) sourceFunc {
	return func(r *http.Request, buf []byte) []byte {
		a := s.clientIP(r)
		if !a.IsValid() {
			return buf
		}
		return a.AppendTo(buf)
	}
}

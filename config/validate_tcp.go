package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// The ValidationError kinds of TCP and UDP objects.
const (
	KindTCPRouter           = "tcpRouter"
	KindTCPService          = "tcpService"
	KindTCPMiddleware       = "tcpMiddleware"
	KindTCPServersTransport = "tcpServersTransport"
	KindUDPRouter           = "udpRouter"
	KindUDPService          = "udpService"
)

func validateTCP(t *TCPConfiguration) []ValidationError {
	if t == nil {
		return nil
	}
	errs := validateEach(KindTCPRouter, t.Routers, validateTCPRouter)
	errs = append(errs, validateEach(KindTCPService, t.Services, validateTCPService)...)
	errs = append(errs, validateEach(KindTCPMiddleware, t.Middlewares, validateTCPMiddleware)...)
	for _, name := range sortedKeys(t.ServersTransports) {
		st := t.ServersTransports[name]
		if st == nil {
			continue
		}
		if pp := st.ProxyProtocol; pp != nil && pp.Version != 0 && pp.Version != 1 && pp.Version != 2 {
			errs = append(errs, ValidationError{Kind: KindTCPServersTransport, Name: name, Field: "proxyProtocol.version", Msg: fmt.Sprintf("%d is not 1 or 2", pp.Version)})
		}
	}
	return errs
}

func validateTCPRouter(e fieldErrorf, _ string, r *TCPRouter) []ValidationError {
	var errs []ValidationError
	if strings.TrimSpace(r.Rule) == "" {
		errs = append(errs, e("rule", "empty; a TCP router needs a rule (HostSNI(`*`) matches every connection)"))
	}
	if r.Service == "" {
		errs = append(errs, e("service", "empty; a router needs a service"))
	}
	return append(errs, validateRouterCommon(e, &r.RouterCommon)...)
}

// validHostPort checks "host:port" with a numeric port in 1-65535.
func validHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%q: want host:port: %w", a, err)
	}
	if host == "" {
		return fmt.Errorf("%q: no host", a)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be a number within 1-65535", a)
	}
	return nil
}

func validateTCPService(e fieldErrorf, _ string, s *TCPService) []ValidationError {
	errs, ok := validateL4Service(e, s.LoadBalancer, s.Weighted)
	if lb := s.LoadBalancer; ok && lb != nil {
		if pp := lb.ProxyProtocol; pp != nil && pp.Version != 0 && pp.Version != 1 && pp.Version != 2 {
			errs = append(errs, e("loadBalancer.proxyProtocol.version", "%d is not 1 or 2", pp.Version))
		}
		if hc := lb.HealthCheck; hc != nil {
			if hc.Interval < 0 || hc.Timeout < 0 {
				errs = append(errs, e("loadBalancer.healthCheck", "interval and timeout must not be negative"))
			}
			if hc.Port < 0 || hc.Port > 65535 {
				errs = append(errs, e("loadBalancer.healthCheck.port", "%d is out of range", hc.Port))
			}
		}
	}
	return errs
}

// validateWRR checks the services of a weighted round robin: at least one,
// each named (or, for HTTP only, a status from 100 to 599 instead of a
// name), no weight negative.
func validateWRR(e fieldErrorf, svcs []WRRService, http bool) []ValidationError {
	var errs []ValidationError
	if len(svcs) == 0 {
		errs = append(errs, e("weighted.services", "empty"))
	}
	for i, c := range svcs {
		f := fmt.Sprintf("weighted.services[%d]", i)
		switch {
		case c.Status == nil:
			if c.Name == "" {
				errs = append(errs, e(f+".name", "empty"))
			}
		case !http:
			if c.Name == "" {
				errs = append(errs, e(f+".name", "empty"))
			}
			errs = append(errs, e(f+".status", "HTTP services only"))
		case c.Name != "":
			errs = append(errs, e(f, "name and status are exclusive"))
		case *c.Status < 100 || *c.Status > 599:
			errs = append(errs, e(f+".status", "%d is not an HTTP status", *c.Status))
		}
		if c.Weight != nil && *c.Weight < 0 {
			errs = append(errs, e(f+".weight", "%d is negative", *c.Weight))
		}
	}
	return errs
}

func validateTCPMiddleware(e fieldErrorf, _ string, m *TCPMiddleware) []ValidationError {
	kinds, errs := oneKind(e, "inFlightConn, ipAllowList",
		member{"inFlightConn", m.InFlightConn != nil}, member{"ipAllowList", m.IPAllowList != nil}, member{"ipWhiteList", m.IPWhiteList != nil})
	if errs != nil {
		return errs
	}
	if c := m.InFlightConn; c != nil && c.Amount <= 0 {
		errs = append(errs, e("inFlightConn.amount", "%d: want at least 1", c.Amount))
	}
	for _, l := range []*TCPIPAllowList{m.IPAllowList, m.IPWhiteList} {
		if l == nil {
			continue
		}
		if len(l.SourceRange) == 0 {
			errs = append(errs, e(kinds[0]+".sourceRange", "empty; it would refuse every connection"))
		}
		for i, r := range l.SourceRange {
			if _, err := ParseIPRange(r); err != nil {
				errs = append(errs, e(fmt.Sprintf("%s.sourceRange[%d]", kinds[0], i), "%v", err))
			}
		}
	}
	return errs
}

// ParseIPRange parses an IP ("10.0.0.1", "::1") or a CIDR ("10.0.0.0/8")
// into a prefix; a bare IP is a single-address prefix. IPv4-mapped IPv6
// addresses are unmapped.
func ParseIPRange(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither an IP nor a CIDR", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func validateUDP(u *UDPConfiguration) []ValidationError {
	if u == nil {
		return nil
	}
	errs := validateEach(KindUDPRouter, u.Routers, func(e fieldErrorf, _ string, r *UDPRouter) []ValidationError {
		if r.Service == "" {
			return []ValidationError{e("service", "empty; a router needs a service")}
		}
		return nil
	})
	return append(errs, validateEach(KindUDPService, u.Services, func(e fieldErrorf, _ string, s *UDPService) []ValidationError {
		errs, _ := validateL4Service(e, s.LoadBalancer, s.Weighted)
		return errs
	})...)
}

// l4Server is a TCP or a UDP server: an address and a weight.
type l4Server interface {
	TCPServer | UDPServer
	addressWeight() (string, *int)
}

func (s TCPServer) addressWeight() (string, *int) { return s.Address, s.Weight }
func (s UDPServer) addressWeight() (string, *int) { return s.Address, s.Weight }

// l4Balancer is a TCP or a UDP service's loadBalancer (*TCPServersLoadBalancer,
// *UDPServersLoadBalancer), nil when unset.
type l4Balancer[S l4Server] interface {
	comparable
	servers() []S
}

// l4Weighted is a TCP or a UDP service's weighted block
// (*TCPWeightedRoundRobin, *UDPWeightedRoundRobin), nil when unset.
type l4Weighted interface {
	comparable
	services() []WRRService
}

func (lb *TCPServersLoadBalancer) servers() []TCPServer { return lb.Servers }
func (lb *UDPServersLoadBalancer) servers() []UDPServer { return lb.Servers }
func (w *TCPWeightedRoundRobin) services() []WRRService { return w.Services }
func (w *UDPWeightedRoundRobin) services() []WRRService { return w.Services }

// validateL4Service checks what TCP and UDP services share: exactly one of
// lb and weighted is set (not nil), each server's address is host:port and
// its weight not negative, the weighted services are valid. ok is false
// when the kind is wrong (nothing else checked).
func validateL4Service[S l4Server, LB l4Balancer[S], W l4Weighted](e fieldErrorf, lb LB, weighted W) (errs []ValidationError, ok bool) {
	var noLB LB
	var noWeighted W
	if _, errs := oneKind(e, "loadBalancer, weighted", member{"loadBalancer", lb != noLB}, member{"weighted", weighted != noWeighted}); errs != nil {
		return errs, false
	}
	if lb != noLB {
		for i, srv := range lb.servers() {
			addr, weight := srv.addressWeight()
			errs = append(errs, validateL4Server(e, i, addr, weight)...)
		}
	}
	if weighted != noWeighted {
		errs = append(errs, validateWRR(e, weighted.services(), false)...)
	}
	return errs, true
}

// validateL4Server checks server i of a TCP or UDP load balancer: its
// address is host:port, its weight (nil: unset) not negative.
func validateL4Server(e fieldErrorf, i int, address string, weight *int) []ValidationError {
	var errs []ValidationError
	f := fmt.Sprintf("loadBalancer.servers[%d]", i)
	if address == "" {
		errs = append(errs, e(f+".address", "empty"))
	} else if err := validHostPort(address); err != nil {
		errs = append(errs, e(f+".address", "%v", err))
	}
	if weight != nil && *weight < 0 {
		errs = append(errs, e(f+".weight", "%d is negative", *weight))
	}
	return errs
}

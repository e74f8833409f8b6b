package dataplane

import (
	"fmt"
	"net"
	"net/netip"
)

// trustList decides whether a peer may set X-Forwarded-* headers.
// Source: https://doc.traefik.io/traefik/routing/entrypoints/#forwarded-headers
type trustList struct {
	insecure bool
	prefixes []netip.Prefix
}

// parseTrustList parses trustedIPs entries, each an IP or a CIDR. It
// returns an error naming the bad entry.
func parseTrustList(insecure bool, ips []string) (trustList, error) {
	tl := trustList{insecure: insecure}
	for _, s := range ips {
		if p, err := netip.ParsePrefix(s); err == nil {
			tl.prefixes = append(tl.prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return trustList{}, fmt.Errorf("trustedIPs: %q is neither an IP nor a CIDR", s)
		}
		tl.prefixes = append(tl.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return tl, nil
}

// trusts reports whether the peer at addr (a net.Addr of a TCP connection)
// is trusted.
func (tl trustList) trusts(addr net.Addr) bool {
	if tl.insecure {
		return true
	}
	if len(tl.prefixes) == 0 {
		return false
	}
	var ip netip.Addr
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		ap, err := netip.ParseAddrPort(addr.String())
		if err != nil {
			return false
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap()
	for _, p := range tl.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

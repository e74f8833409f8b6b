package tcpproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// The PROXY protocol (https://www.haproxy.org/download/2.9/doc/proxy-protocol.txt).
var (
	v1Prefix = []byte("PROXY ")
	v2Sig    = []byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A}
)

// ProxyHeader returns the PROXY protocol header (version 1 or 2) saying
// that client connected to local. An address that is not IP gives the
// UNKNOWN (v1) or LOCAL (v2) form.
func ProxyHeader(version int, client netip.AddrPort, local net.Addr) []byte {
	var dst netip.AddrPort
	if ta, ok := local.(*net.TCPAddr); ok {
		dst = ta.AddrPort()
	} else if local != nil {
		dst, _ = netip.ParseAddrPort(local.String())
	}
	src := netip.AddrPortFrom(client.Addr().Unmap(), client.Port())
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	ok := src.IsValid() && dst.IsValid() && src.Addr().Is4() == dst.Addr().Is4()
	if version == 1 {
		if !ok {
			return []byte("PROXY UNKNOWN\r\n")
		}
		fam := "TCP4"
		if src.Addr().Is6() {
			fam = "TCP6"
		}
		return fmt.Appendf(nil, "PROXY %s %s %s %d %d\r\n", fam, src.Addr(), dst.Addr(), src.Port(), dst.Port())
	}
	b := append([]byte{}, v2Sig...)
	if !ok {
		return append(b, 0x20, 0x00, 0, 0) // version 2, LOCAL, UNSPEC
	}
	if src.Addr().Is4() {
		b = append(b, 0x21, 0x11, 0, 12) // PROXY, TCP over IPv4, 12 bytes
	} else {
		b = append(b, 0x21, 0x21, 0, 36) // PROXY, TCP over IPv6, 36 bytes
	}
	b = append(b, src.Addr().AsSlice()...)
	b = append(b, dst.Addr().AsSlice()...)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	return binary.BigEndian.AppendUint16(b, dst.Port())
}

// ErrNoProxyHeader means the connection does not start with a PROXY
// protocol header.
var ErrNoProxyHeader = errors.New("no PROXY protocol header")

// ReadProxyHeader reads a PROXY protocol v1 or v2 header from br and
// returns the source address it carries; ok is false for the LOCAL and
// UNKNOWN forms (the peer speaks for itself). Without a header it returns
// ErrNoProxyHeader having consumed nothing. A v1 line is at most 107
// bytes, a v2 header at most 16+65535 (Gantry accepts 16+536, enough for
// any address block with TLVs of ordinary size); longer ones are errors.
func ReadProxyHeader(br *bufio.Reader) (src netip.AddrPort, ok bool, err error) {
	first, err := br.Peek(1)
	if err != nil {
		return src, false, err
	}
	switch first[0] {
	case 'P':
		return readV1(br)
	case 0x0D:
		return readV2(br)
	}
	return src, false, ErrNoProxyHeader
}

func readV1(br *bufio.Reader) (netip.AddrPort, bool, error) {
	var line []byte
	for len(line) < 107 {
		b, err := br.Peek(len(line) + 1)
		if err != nil {
			return netip.AddrPort{}, false, err
		}
		line = b
		if !bytes.HasPrefix(v1Prefix, line) && !bytes.HasPrefix(line, v1Prefix) {
			return netip.AddrPort{}, false, ErrNoProxyHeader
		}
		if bytes.HasSuffix(line, []byte("\r\n")) {
			break
		}
	}
	if !bytes.HasSuffix(line, []byte("\r\n")) {
		return netip.AddrPort{}, false, errors.New("proxy protocol v1: header longer than 107 bytes")
	}
	_, _ = br.Discard(len(line))
	f := strings.Fields(strings.TrimSuffix(string(line), "\r\n"))
	if len(f) >= 2 && f[1] == "UNKNOWN" {
		return netip.AddrPort{}, false, nil
	}
	if len(f) != 6 || (f[1] != "TCP4" && f[1] != "TCP6") {
		return netip.AddrPort{}, false, fmt.Errorf("proxy protocol v1: malformed header %q", line)
	}
	ip, err := netip.ParseAddr(f[2])
	if err != nil {
		return netip.AddrPort{}, false, fmt.Errorf("proxy protocol v1: source %q: %w", f[2], err)
	}
	port, err := strconv.ParseUint(f[4], 10, 16)
	if err != nil {
		return netip.AddrPort{}, false, fmt.Errorf("proxy protocol v1: source port %q", f[4])
	}
	return netip.AddrPortFrom(ip, uint16(port)), true, nil
}

func readV2(br *bufio.Reader) (netip.AddrPort, bool, error) {
	for i := 1; i <= len(v2Sig); i++ {
		b, err := br.Peek(i)
		if err != nil {
			return netip.AddrPort{}, false, err
		}
		if !bytes.Equal(b, v2Sig[:i]) {
			return netip.AddrPort{}, false, ErrNoProxyHeader
		}
	}
	hdr, err := br.Peek(16)
	if err != nil {
		return netip.AddrPort{}, false, err
	}
	verCmd, fam := hdr[12], hdr[13]
	n := int(binary.BigEndian.Uint16(hdr[14:16]))
	if verCmd>>4 != 2 {
		return netip.AddrPort{}, false, fmt.Errorf("proxy protocol v2: version %d", verCmd>>4)
	}
	if n > 536 {
		return netip.AddrPort{}, false, fmt.Errorf("proxy protocol v2: %d-byte address block is too long", n)
	}
	full, err := br.Peek(16 + n)
	if err != nil {
		return netip.AddrPort{}, false, err
	}
	body := bytes.Clone(full[16:])
	_, _ = br.Discard(16 + n)
	if verCmd&0x0F == 0 { // LOCAL
		return netip.AddrPort{}, false, nil
	}
	switch fam >> 4 {
	case 1:
		if n < 12 {
			return netip.AddrPort{}, false, errors.New("proxy protocol v2: short IPv4 block")
		}
		ip := netip.AddrFrom4([4]byte(body[0:4]))
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(body[8:10])), true, nil
	case 2:
		if n < 36 {
			return netip.AddrPort{}, false, errors.New("proxy protocol v2: short IPv6 block")
		}
		ip := netip.AddrFrom16([16]byte(body[0:16]))
		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(body[32:34])), true, nil
	}
	return netip.AddrPort{}, false, nil // UNSPEC or unix: keep the peer address
}

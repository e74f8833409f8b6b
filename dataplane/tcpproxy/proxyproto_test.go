package tcpproxy

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestProxyHeaderRoundTrip(t *testing.T) {
	local := &net.TCPAddr{IP: net.ParseIP("198.51.100.1"), Port: 443}
	local6 := &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 443}
	for _, tc := range []struct {
		v      int
		client string
		local  net.Addr
		want1  string
	}{
		{1, "203.0.113.7:4242", local, "PROXY TCP4 203.0.113.7 198.51.100.1 4242 443\r\n"},
		{2, "203.0.113.7:4242", local, ""},
		{1, "[2001:db8::7]:4242", local6, "PROXY TCP6 2001:db8::7 2001:db8::1 4242 443\r\n"},
		{2, "[2001:db8::7]:4242", local6, ""},
	} {
		src := netip.MustParseAddrPort(tc.client)
		h := ProxyHeader(tc.v, src, tc.local)
		if tc.want1 != "" && string(h) != tc.want1 {
			t.Errorf("v1 header %q, want %q", h, tc.want1)
		}
		br := bufio.NewReader(bytes.NewReader(append(h, "data"...)))
		got, ok, err := ReadProxyHeader(br)
		if err != nil || !ok || got != src {
			t.Errorf("v%d %s: read %v %v %v", tc.v, tc.client, got, ok, err)
		}
		rest, _ := br.ReadString(0)
		if rest != "data" {
			t.Errorf("v%d: payload after header %q", tc.v, rest)
		}
	}
	// Mixed families: UNKNOWN / LOCAL, the peer speaks for itself.
	h := ProxyHeader(1, netip.MustParseAddrPort("203.0.113.7:1"), local6)
	if string(h) != "PROXY UNKNOWN\r\n" {
		t.Errorf("mixed v1: %q", h)
	}
	if _, ok, err := ReadProxyHeader(bufio.NewReader(bytes.NewReader(h))); ok || err != nil {
		t.Errorf("UNKNOWN: ok=%v err=%v", ok, err)
	}
}

func TestReadProxyHeaderRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"no header":  "GET / HTTP/1.1\r\n",
		"postgres":   "\x00\x00\x00\x08\x04\xd2\x16\x2f",
		"tls":        "\x16\x03\x01",
		"near miss":  "PROXX TCP4",
		"v2 near":    "\r\n\r\n\x00\r\nQUIX\n",
		"long v1":    "PROXY " + strings.Repeat("1", 200) + "\r\n",
		"bad v1":     "PROXY TCP4 nope 1.2.3.4 1 2\r\n",
		"bad family": "PROXY UDP4 1.2.3.4 1.2.3.4 1 2\r\n",
	} {
		_, ok, err := ReadProxyHeader(bufio.NewReader(strings.NewReader(in)))
		if ok || err == nil {
			t.Errorf("%s: ok=%v err=%v, want an error", name, ok, err)
		}
		if strings.HasPrefix(name, "no") || name == "postgres" || name == "tls" || name == "near miss" || name == "v2 near" {
			if !errors.Is(err, ErrNoProxyHeader) {
				t.Errorf("%s: %v, want ErrNoProxyHeader (nothing consumed)", name, err)
			}
		}
	}
}

func TestWRRSmooth(t *testing.T) {
	w := newWRR([]string{"a", "b", "c"}, func(s string) int { return map[string]int{"a": 5, "b": 1, "c": 0}[s] })
	got := ""
	for range 12 {
		s, _ := w.pick(func(string) bool { return true })
		got += s
	}
	if strings.Count(got, "a") != 10 || strings.Count(got, "b") != 2 || strings.Contains(got, "c") {
		t.Errorf("sequence %s", got)
	}
	if strings.Contains(got, "bb") {
		t.Errorf("not smooth: %s", got)
	}
	if _, ok := w.pick(func(s string) bool { return s == "c" }); ok {
		t.Error("weight 0 picked")
	}
}

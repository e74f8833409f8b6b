package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestForwardedPort(t *testing.T) {
	tests := []struct{ host, proto, want string }{
		{"shop.example.com", "http", "80"},
		{"shop.example.com", "https", "443"},
		{"shop.example.com", "wss", "443"},
		{"shop.example.com:8443", "http", "8443"},
		{"[::1]", "https", "443"},
		{"[::1]:81", "http", "81"},
	}
	for _, tt := range tests {
		if got := forwardedPort(tt.host, tt.proto); got != tt.want {
			t.Errorf("forwardedPort(%q, %q) = %q, want %q", tt.host, tt.proto, got, tt.want)
		}
	}
}

// FuzzPrepareForwarded: for an untrusted peer, whatever the client sent,
// no forwarding header survives except the ones regenerated from the
// connection, and no underscore spelling of one is left.
func FuzzPrepareForwarded(f *testing.F) {
	f.Add("X-Forwarded-For", "203.0.113.250", "shop.example.com", false)
	f.Add("X_Forwarded_For", "6.6.6.6", "a:1", true)
	f.Add("x-real-ip", "1.2.3.4", "[::1]:8080", false)
	f.Add("Connection", "upgrade", "h", true)
	f.Fuzz(func(t *testing.T, name, value, host string, ws bool) {
		if !validHeaderName(name) {
			return
		}
		r := &http.Request{Header: http.Header{}, Host: host, RemoteAddr: "192.0.2.9:1234"}
		r.Header.Add(name, value) // canonicalised, as net/http does for the wire

		if ws {
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "websocket")
		}
		PrepareForwarded(r, false, "gantry")
		for k := range r.Header {
			canon := http.CanonicalHeaderKey(strings.ReplaceAll(k, "_", "-"))
			if isManaged(canon) && strings.Contains(k, "_") {
				t.Fatalf("underscore spelling %q kept", k)
			}
		}
		if v := r.Header["X-Forwarded-For"]; v != nil {
			t.Fatalf("client X-Forwarded-For kept: %q", v)
		}
		if got := r.Header.Get("X-Real-Ip"); got != "192.0.2.9" {
			t.Fatalf("X-Real-Ip = %q, want the peer", got)
		}
		if got := r.Header.Get("X-Forwarded-Proto"); got != "http" && got != "ws" {
			t.Fatalf("X-Forwarded-Proto = %q", got)
		}
	})
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// The forwarding headers' values are shared slices once seen, bounded in
// number: no allocation per request for a known client and host.
func TestForwardedValuesShared(t *testing.T) {
	c := newValueCache(2)
	a, b := c.of("example.com"), c.of("example.com")
	if &a[0] != &b[0] || cap(a) != 1 {
		t.Fatalf("a value seen before was not shared (cap %d)", cap(a))
	}
	c.of("b")
	x, y := c.of("c"), c.of("c")
	if &x[0] == &y[0] || len(*c.m.Load()) != 2 {
		t.Fatalf("the cache grew past its bound: %d entries", len(*c.m.Load()))
	}
	r := httptest.NewRequest("GET", "http://shop.test/", nil)
	r.RemoteAddr = "192.0.2.7:1234"
	PrepareForwarded(r, false, "gantry")
	if n := testing.AllocsPerRun(100, func() {
		clear(r.Header)
		PrepareForwarded(r, false, "gantry")
	}); n != 0 {
		t.Fatalf("prepareForwarded allocates %.0f times per request for a known client and host", n)
	}
}

// An untrusted peer's forwarding headers are all dropped (each managed
// header, each spelling) and the ones Gantry sets are regenerated from the
// connection; a trusted peer's are kept and completed (case 026). Their
// underscore spellings, and those of framing fields, go either way.
func TestPrepareForwardedTrust(t *testing.T) {
	const evil = "203.0.113.66"
	for _, trusted := range []bool{false, true} {
		r := httptest.NewRequest("GET", "http://shop.test:8080/", nil)
		r.RemoteAddr = "192.0.2.9:1234"
		for _, k := range managedHeaders {
			r.Header[k] = []string{evil}
			r.Header[strings.ReplaceAll(k, "-", "_")] = []string{evil}
		}
		r.Header["Transfer_Encoding"] = []string{"chunked"}
		r.Header["Content_Length"] = []string{"5"}
		PrepareForwarded(r, trusted, "gantry")
		for k, v := range r.Header {
			if strings.Contains(k, "_") {
				t.Errorf("trusted=%v: underscore spelling %s: %q kept", trusted, k, v)
			}
		}
		regenerated := map[string]string{
			"X-Forwarded-Proto":  "http",
			"X-Forwarded-Host":   "shop.test:8080",
			"X-Forwarded-Port":   "8080",
			"X-Real-Ip":          "192.0.2.9",
			"X-Forwarded-Server": "gantry",
		}
		for _, k := range managedHeaders {
			got, want := r.Header[k], []string(nil)
			switch {
			case k == "X-Forwarded-Server":
				want = []string{"gantry"} // always Gantry's own
			case trusted:
				want = []string{evil}
			case regenerated[k] != "":
				want = []string{regenerated[k]}
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("trusted=%v: %s = %q, want %q", trusted, k, got, want)
			}
		}
	}
}

// BenchmarkPrepareForwarded is the forwarded-header set of one request
// from an untrusted peer (the default): a browser's fields, then the ones
// Gantry sets. The map is refilled per iteration (the same cost before and
// after a change of PrepareForwarded).
func BenchmarkPrepareForwarded(b *testing.B) {
	for _, trusted := range []bool{false, true} {
		b.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(b *testing.B) {
			r := httptest.NewRequest("GET", "http://shop.test/", nil)
			r.RemoteAddr = "192.0.2.7:1234"
			ua, acc, enc, lang := []string{"Mozilla/5.0"}, []string{"*/*"}, []string{"gzip, br"}, []string{"en"}
			b.ReportAllocs()
			c0 := cpuTime(b)
			for b.Loop() {
				clear(r.Header)
				r.Header["User-Agent"], r.Header["Accept"] = ua, acc
				r.Header["Accept-Encoding"], r.Header["Accept-Language"] = enc, lang
				PrepareForwarded(r, trusted, "gantry")
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user plus system CPU time so far (getrusage):
// on a shared machine, ns/op counts the waits for a CPU too.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

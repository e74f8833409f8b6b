package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/config"
)

// One serversTransport configuration is one shared transport (h2c apart),
// kept while a reference holds it and dropped with the last release; a
// broken one is an error naming the field.
func TestTransportsSharedByConfiguration(t *testing.T) {
	ts := NewTransports(nil)
	defer ts.Close()
	c1, t1, k1, err := ts.Acquire(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	c2, t2, k2, _ := ts.Acquire(&config.ServersTransport{}, false) // the default, spelled out
	if c1 != c2 || t1 != t2 || k1 != k2 {
		t.Errorf("the same configuration got two transports")
	}
	c3, _, k3, _ := ts.Acquire(nil, true)
	c4, _, k4, _ := ts.Acquire(&config.ServersTransport{MaxIdleConnsPerHost: 7}, false)
	if c3 == c1 || k3 == k1 || c4 == c1 || k4 == k1 {
		t.Errorf("h2c or another configuration shares the default transport")
	}
	ts.Release(k1)
	if c, _, _, _ := ts.Acquire(nil, false); c != c1 {
		t.Errorf("a transport still referenced was dropped")
	}
	ts.Release(k1)
	ts.Release(k2)
	if c, _, k, _ := ts.Acquire(nil, false); c == c1 {
		t.Errorf("the last release kept the transport")
	} else {
		ts.Release(k)
	}
	ts.Release(k3)
	ts.Release(k4)
	ts.mu.Lock()
	left := len(ts.m)
	ts.mu.Unlock()
	if left != 0 {
		t.Errorf("%d transports left after every release", left)
	}
	if _, _, _, err := ts.Acquire(&config.ServersTransport{TLSClientCommon: config.TLSClientCommon{RootCAs: []string{"/nonexistent/ca.pem"}}}, false); err == nil || !strings.Contains(err.Error(), "rootCAs[0]") {
		t.Errorf("unreadable rootCAs: %v, want an error naming rootCAs[0]", err)
	}
}

// Issue 26: forwardingTimeouts mean what Traefik's do — a field left out
// takes its default, a field set to 0 is no limit — plus Gantry's
// readTimeout between body bytes (default 5m).
func TestForwardingTimeoutsTraefikSemantics(t *testing.T) {
	c, err := config.Decode([]byte(`
http:
  serversTransports:
    unset: {}
    partial: {forwardingTimeouts: {responseHeaderTimeout: 5s}}
    zero: {forwardingTimeouts: {dialTimeout: 0s, responseHeaderTimeout: 0s, idleConnTimeout: 0s, readIdleTimeout: 0s, pingTimeout: 0s, readTimeout: 0s}}
    set: {forwardingTimeouts: {dialTimeout: 1s, responseHeaderTimeout: 2s, idleConnTimeout: 3s, readIdleTimeout: 4s, pingTimeout: 5s, readTimeout: 6s}}
`), config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ dial, header, idle, readIdle, ping, body time.Duration }
	for name, w := range map[string]want{
		"unset":   {30 * time.Second, 60 * time.Second, 90 * time.Second, 0, 15 * time.Second, 5 * time.Minute},
		"partial": {30 * time.Second, 5 * time.Second, 90 * time.Second, 0, 15 * time.Second, 5 * time.Minute},
		"zero":    {noLimit, 0, noLimit, 0, 0, 0},
		"set":     {time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second},
	} {
		o := forwarding(c.HTTP.ServersTransports[name].ForwardingTimeouts)
		got := want{o.DialTimeout, o.ResponseHeaderTimeout, o.IdleConnTimeout, o.ReadIdleTimeout, o.PingTimeout, o.BodyReadTimeout}
		if got != w {
			t.Errorf("%s: got %+v, want %+v", name, got, w)
		}
	}
}

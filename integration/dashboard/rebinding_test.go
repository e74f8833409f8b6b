package dashboard

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Issue 15 (DNS rebinding), through the real binary: with api.insecure and
// no api.allowedHosts, the API answers Hosts that name its listener
// (loopback names, its IP) and refuses any other name with 403 — the
// rawdata, the WebSocket and POST /api/simulate alike.
func TestAPIRefusesRebindingHost(t *testing.T) {
	e := start(t, "first")
	addr := strings.TrimPrefix(e.admin, "http://")
	_, port, _ := strings.Cut(addr, ":")
	for _, tc := range []struct {
		host string
		code int
	}{
		{addr, 200}, {"localhost:" + port, 200}, {"rebind.attacker.example:" + port, 403}, {"192.0.2.1:" + port, 403},
	} {
		harness.TryGet(t, 60*time.Second, e.admin+"/api/rawdata", harness.Host(tc.host), harness.StatusIs(tc.code))
		if tc.code != 403 {
			continue
		}
		// The WebSocket upgrade is refused before the handshake (a 101
		// would hang this plain client).
		req, _ := http.NewRequest("GET", e.admin+"/api/ws", nil)
		req.Host = tc.host
		for k, v := range map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("WebSocket with Host %s: %v", tc.host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("WebSocket with Host %s: %d, want 403", tc.host, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", e.admin+"/api/simulate", strings.NewReader(`{"url":"http://first.example/","entryPoint":"web"}`))
	req.Host = "rebind.attacker.example:" + port
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("POST /api/simulate with a rebinding Host: %d, want 403", resp.StatusCode)
	}
}

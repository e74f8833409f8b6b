package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Case 026: inbound X-Forwarded-* and X-Real-Ip are kept (and the peer
// appended) only from trusted peers; otherwise they are replaced by values
// derived from the connection. The client here is 127.0.0.1, standing in
// for the nginx of the report; entrypoint "trusted" trusts 127.0.0.1/32,
// "elsewhere" only 192.0.2.31/32, "web" nobody, "insecure" everybody.
func TestForwardedHeaders(t *testing.T) {
	w := harness.StartWhoami(t, "fwd")
	p := startProxy(t, map[string]string{"web": "", "trusted": "", "insecure": "", "elsewhere": ""}, "", fmt.Sprintf(`
http:
  routers:
    shop: {rule: "Host(`+"`shop.example.com`"+`)", service: shop}
  services:
    shop:
      loadBalancer:
        servers: [{url: "http://%s"}]
`, w))
	fromNginx := []harness.ReqOption{
		harness.Host("shop.example.com"),
		harness.Header("X-Forwarded-For", "203.0.113.7"),
		harness.Header("X-Forwarded-Proto", "https"),
		harness.Header("X-Forwarded-Host", "shop.example.com"),
		harness.Header("X-Real-Ip", "203.0.113.7"),
		func(r *http.Request) { r.Header["X_Forwarded_For"] = []string{"198.51.100.66"} },
	}
	appended := map[string]string{
		"X-Forwarded-For":   "203.0.113.7, 127.0.0.1",
		"X-Real-Ip":         "203.0.113.7",
		"X-Forwarded-Proto": "https",
		"X-Forwarded-Host":  "shop.example.com",
		"X-Forwarded-Port":  "443", // absent: derived from the trusted proto https
	}
	tests := []struct {
		ep   string
		want map[string]string
	}{
		{"web", map[string]string{
			"X-Forwarded-For":   "127.0.0.1",
			"X-Real-Ip":         "127.0.0.1",
			"X-Forwarded-Proto": "http",
			"X-Forwarded-Host":  "shop.example.com",
			"X-Forwarded-Port":  "80",
		}},
		{"trusted", appended},
		// The attacker of case 026: a peer (127.0.0.1) that is not in
		// trustedIPs (192.0.2.31/32) gets its spoofed headers replaced.
		{"elsewhere", map[string]string{
			"X-Forwarded-For":   "127.0.0.1",
			"X-Real-Ip":         "127.0.0.1",
			"X-Forwarded-Proto": "http",
		}},
		{"insecure", appended},
	}
	for _, tt := range tests {
		t.Run(tt.ep, func(t *testing.T) {
			r := get(t, p.URL(t, tt.ep, "/"), fromNginx...)
			if r.StatusCode != 200 {
				t.Fatalf("status %d: %s", r.StatusCode, r.Body)
			}
			e := parseEcho(r.Body)
			for k, want := range tt.want {
				if got := e.header[k]; len(got) != 1 || got[0] != want {
					t.Errorf("%s: got %q, want [%q]", k, got, want)
				}
			}
			if got := e.header["X-Forwarded-Server"]; len(got) != 1 || got[0] == "" {
				t.Errorf("X-Forwarded-Server: got %q, want the proxy's host name", got)
			}
			if got := e.header["Host"]; len(got) != 1 || got[0] != "shop.example.com" {
				t.Errorf("Host: got %q, want the client's (passHostHeader defaults to true)", got)
			}
			if tt.ep == "web" || tt.ep == "elsewhere" {
				for k := range e.header {
					if strings.Contains(strings.ToLower(k), "forwarded_for") {
						t.Errorf("underscore variant %s reached the backend from an untrusted peer", k)
					}
				}
			}
		})
	}

}

package label

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// readKeyValues reads "key=value" lines (no comments, no blank lines kept).
func readKeyValues(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		out[k] = v
	}
	return out
}

// TestTCPUDPLabelsMatchFileForm: the label form of a TCP/UDP configuration
// decodes to the same model as its file form (issue 14).
func TestTCPUDPLabelsMatchFileForm(t *testing.T) {
	data, err := os.ReadFile("testdata/tcp-udp.yml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.Decode(data, config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	got, errs := Decode(readKeyValues(t, "testdata/tcp-udp.labels"), "traefik")
	for _, e := range errs {
		t.Errorf("decode: %v", e)
	}
	w, _ := json.MarshalIndent(struct{ TCP, UDP any }{want.TCP, want.UDP}, "", "  ")
	g, _ := json.MarshalIndent(struct{ TCP, UDP any }{got.TCP, got.UDP}, "", "  ")
	if string(w) != string(g) {
		t.Errorf("labels decode to\n%s\nwant (file form)\n%s", g, w)
	}
	if !strings.Contains(string(g), `"passthrough": true`) || !strings.Contains(string(g), `"amount": 10`) {
		t.Errorf("model lacks decoded fields:\n%s", g)
	}
}

// TestTCPLabelErrorsNameTheKey: a bad TCP or UDP label disables only its
// object, and the error names the full key.
func TestTCPLabelErrorsNameTheKey(t *testing.T) {
	labels := map[string]string{
		"traefik.tcp.routers.ok.rule":                             "HostSNI(`*`)",
		"traefik.tcp.routers.bad.priority":                        "high",
		"traefik.tcp.services.s.loadbalancer.server.tls":          "yes",
		"traefik.tcp.services.s2.loadbalancer.servers[0].address": "a:1",
		"traefik.tcp.middlewares.m.inflightconn.amount":           "x",
		"traefik.tcp.tlsoptions.x":                                "1",
		"traefik.udp.routers.u.rule":                              "HostSNI(`*`)",
		"traefik.udp.services.us.loadbalancer.server.port":        "53",
	}
	c, errs := Decode(labels, "traefik")
	got := map[string]string{}
	for _, e := range errs {
		got[e.Key] = e.Object + ": " + e.Err.Error()
	}
	want := map[string]string{
		"traefik.tcp.routers.bad.priority":               "tcp router bad: ",
		"traefik.tcp.services.s.loadbalancer.server.tls": "tcp service s: ",
		"traefik.tcp.middlewares.m.inflightconn.amount":  "tcp middleware m: ",
		"traefik.tcp.tlsoptions.x":                       ": unknown section: under tcp",
		"traefik.udp.routers.u.rule":                     `udp router u: unknown field "rule"`,
	}
	for k, prefix := range want {
		if !strings.HasPrefix(got[k], prefix) {
			t.Errorf("key %s: got %q, want prefix %q", k, got[k], prefix)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d errors %v, want %d", len(got), got, len(want))
	}
	if c.TCP == nil || c.TCP.Routers["ok"] == nil || c.TCP.Routers["bad"] != nil || c.TCP.Services["s"] != nil || c.TCP.Services["s2"] == nil {
		t.Errorf("tcp objects: %+v", c.TCP)
	}
	if c.UDP == nil || c.UDP.Services["us"] == nil || c.UDP.Routers["u"] != nil {
		t.Errorf("udp objects: %+v", c.UDP)
	}
}

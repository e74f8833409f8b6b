package consul

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
)

// TestTCPUDPTagsMatchFileForm: Consul catalog tags carrying a TCP/UDP
// configuration decode to the same model as its file form (issue 14).
func TestTCPUDPTagsMatchFileForm(t *testing.T) {
	data, err := os.ReadFile("testdata/tcp-udp.yml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.Decode(data, config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/tcp-udp.labels")
	if err != nil {
		t.Fatal(err)
	}
	tags := strings.Split(strings.TrimSpace(string(raw)), "\n")
	labels, ps := tagLabels(instance{where: "service t instance n/t"}, tags)
	if len(ps) > 0 {
		t.Fatalf("tags: %v", ps)
	}
	got, errs := label.Decode(labels, "traefik")
	for _, e := range errs {
		t.Errorf("decode: %v", e)
	}
	w, _ := json.Marshal(struct{ TCP, UDP any }{want.TCP, want.UDP})
	g, _ := json.Marshal(struct{ TCP, UDP any }{got.TCP, got.UDP})
	if string(w) != string(g) {
		t.Errorf("tags decode to\n%s\nwant (file form)\n%s", g, w)
	}
}

package label

import (
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
)

// gantry.entrypoints.<name>.address decodes into Configuration.EntryPoints
// (names case-insensitive, spelled as first written); a key the model does
// not have leaves only that entrypoint out, naming the key; the file form
// decodes to the same model.
func TestEntryPointLabels(t *testing.T) {
	got, errs := Decode(map[string]string{
		"gantry.entrypoints.Redis.address": ":8001",
		"gantry.entrypoints.redis.Address": ":8001",
		"gantry.entrypoints.dns.address":   ":5300/udp",
		"gantry.entrypoints.bad.port":      "8002",
		"gantry.http.routers.r.rule":       "Host(`a`)",
	}, "gantry", "traefik")
	if len(errs) != 1 || errs[0].Key != "gantry.entrypoints.bad.port" || errs[0].Object != "entrypoint bad" {
		t.Fatalf("errors: %v, want one for gantry.entrypoints.bad.port (entrypoint bad)", errs)
	}
	want := map[string]string{"Redis": ":8001", "dns": ":5300/udp"}
	if len(got.EntryPoints) != len(want) {
		t.Fatalf("entrypoints: %v, want %v", got.EntryPoints, want)
	}
	for n, a := range want {
		if ep := got.EntryPoints[n]; ep == nil || ep.Address != a {
			t.Errorf("entrypoint %s: %+v, want address %s", n, ep, a)
		}
	}
	if got.HTTP.Routers["r"] == nil {
		t.Error("router r lost next to entrypoint labels")
	}
	file, err := config.Decode([]byte("entryPoints:\n  Redis: {address: \":8001\"}\n  dns: {address: \":5300/udp\"}\n"), config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	for n, a := range want {
		if ep := file.EntryPoints[n]; ep == nil || ep.Address != a {
			t.Errorf("file form: entrypoint %s: %+v, want address %s", n, ep, a)
		}
	}
	if none, _ := Decode(map[string]string{"gantry.http.routers.r.rule": "Host(`a`)"}, "gantry"); none.EntryPoints != nil {
		t.Errorf("no entrypoint label: EntryPoints = %v, want nil (hash unchanged)", none.EntryPoints)
	}
	if _, errs := Decode(map[string]string{"gantry.entrypoints": "x"}, "gantry"); len(errs) != 1 || !strings.Contains(errs[0].Error(), "section of named objects") {
		t.Errorf("a value on the section: %v", errs)
	}
}

package consul

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

type kvCase struct {
	Comment string            `json:"comment"`
	RootKey string            `json:"rootKey"`
	Pairs   map[string]string `json:"pairs"`
}

func loadKVCase(t *testing.T, path string) kvCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kc kvCase
	if err := json.Unmarshal(raw, &kc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return kc
}

func TestDecodeKVGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/kv/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			kc := loadKVCase(t, f)
			cfg, ps := DecodeKV(kc.Pairs, kc.RootKey)
			golden(t, strings.TrimSuffix(f, ".json")+".golden", providers.Snapshot{Config: cfg, Problems: ps})
		})
	}
}

// TestDecodeKVMatchesFile checks that the KV tree of testdata/kv/full.json
// decodes exactly like the same configuration written as a YAML file.
func TestDecodeKVMatchesFile(t *testing.T) {
	kc := loadKVCase(t, "testdata/kv/full.json")
	got, ps := DecodeKV(kc.Pairs, kc.RootKey)
	if len(ps) > 0 {
		t.Fatalf("got problems %v, want none", ps)
	}
	raw, err := os.ReadFile("testdata/kv/full.yml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.Decode(raw, config.YAML)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(c *config.Configuration) string {
		b, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		out, _ := json.MarshalIndent(m, "", " ")
		return string(out)
	}
	if d := cmp.Diff(norm(want), norm(got)); d != "" {
		t.Errorf("KV and file decode differently (-file +kv):\n%s", d)
	}
}

func TestDecodeKVProblems(t *testing.T) {
	kc := loadKVCase(t, "testdata/kv/bad-keys.json")
	cfg, ps := DecodeKV(kc.Pairs, kc.RootKey)
	if r := cfg.HTTP.Routers["ok"]; r == nil || r.Service != "svc" {
		t.Errorf("router ok: got %+v, want it decoded with service svc", r)
	}
	for _, name := range []string{"bad", "typo", "dotted.name"} {
		if _, ok := cfg.HTTP.Routers[name]; ok {
			t.Errorf("router %s decoded, want it left out", name)
		}
	}
	for _, key := range []string{
		"gantry/prod/http/routers/bad/priority",
		"gantry/prod/http/routers/typo/rulez",
		"gantry/prod/http/routers/dotted.name/rule",
		"gantry/prod/http/services/svc/loadbalancer/servers/x/url",
		"gantry/prod/http/middlewares/rl/rateLimit/average",
		"gantry/prod/http//routers/empty/rule",
	} {
		found := false
		for _, p := range ps {
			if p.Source == "consul key "+key && p.Provider == KVName && p.Message != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem with source %q in %v", "consul key "+key, ps)
		}
	}
}

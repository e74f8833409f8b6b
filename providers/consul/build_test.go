package consul

import (
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

var update = flag.Bool("update", false, "rewrite testdata/**/*.golden from the current output")

// catalogCase is one testdata/catalog/*.json file: provider options and
// the /v1/health/service/<name> answers of every service.
type catalogCase struct {
	Comment  string                         `json:"comment"`
	Options  static.ConsulCatalog           `json:"options"`
	Services map[string][]*api.ServiceEntry `json:"services"`
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func loadCatalogCase(t *testing.T, path string) (*Catalog, catalogCase) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cc catalogCase
	if err := json.Unmarshal(raw, &cc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c, err := NewCatalog(cc.Options, discard())
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return c, cc
}

// golden compares got (as indented JSON) with path, or rewrites path with -update.
func golden(t *testing.T, path string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(b)); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, d)
	}
}

func TestCatalogBuildGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/catalog/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			c, cc := loadCatalogCase(t, f)
			snap := c.b.build(cc.Services)
			golden(t, strings.TrimSuffix(f, ".json")+".golden", snap)
		})
	}
}

// servers returns the server URLs of service name in snap.
func servers(snap providers.Snapshot, name string) []string {
	s := snap.Config.HTTP.Services[name]
	if s == nil || s.LoadBalancer == nil {
		return nil
	}
	var out []string
	for _, sv := range s.LoadBalancer.Servers {
		out = append(out, sv.URL)
	}
	return out
}

// TestCatalogCases spells out the expectations of cases 017 and 018 so the
// golden files are checked against the case files, not only against
// themselves.
func TestCatalogCases(t *testing.T) {
	tests := []struct {
		file        string
		service     string
		wantServers []string
		router      string
		wantRouter  bool
		wantProblem string // substring of some problem's Source + Message
	}{
		{"017-health-default", "api", []string{"http://192.0.2.11:8080", "http://192.0.2.12:8080"}, "api", true,
			"instance n3/api health: aggregated health \"critical\""},
		{"017-health-strict-passing", "api", []string{"http://192.0.2.11:8080"}, "api", true, "instance n2/api health"},
		{"017-health-n1-critical", "api", []string{"http://192.0.2.12:8080"}, "api", true, "instance n1/api health"},
		{"017-health-all-critical", "api", nil, "api", false, "instance n2/api health"},
		{"017-health-maintenance", "api", []string{"http://192.0.2.12:8080", "http://192.0.2.13:8080"}, "api", true,
			"aggregated health \"maintenance\""},
		{"018-instances-merge", "web", []string{"http://192.0.2.21:80", "http://192.0.2.22:80", "http://192.0.2.23:80"}, "web", true, ""},
		{"018-instances-conflict", "web", []string{"http://192.0.2.21:80", "http://192.0.2.22:80", "http://192.0.2.23:80"}, "web", false,
			"consul service web instances n1/web, n2/web, n3/web: router web defined multiple times with different configurations"},
		{"defaults", "my-api-v2", []string{"http://10.0.0.5:9000", "http://[2001:db8::2]:9000"}, "my-api-v2", true, ""},
		{"010-tags", "y", nil, "y", false,
			"consul service y instance n1/y-1 tag traefik.https.routers.y.rule: unknown root \"https\" (want http, tcp or udp): the whole container or service is skipped, as by Traefik; instance not routed"},
		{"010-tags", "w", []string{"http://192.0.2.32:80"}, "w", true, "unknown root"},
		{"010-tags", "t", []string{"http://192.0.2.33:80"}, "t", true, "unknown root"},
		{"bad-tags", "api", []string{"http://192.0.2.61:8080"}, "broken", false,
			"consul service api instance n1/api-1 tag traefik.http.routers.broken.priority: "},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, cc := loadCatalogCase(t, "testdata/catalog/"+tt.file+".json")
			snap := c.b.build(cc.Services)
			if got := servers(snap, tt.service); !cmp.Equal(got, tt.wantServers) {
				t.Errorf("servers of %s: got %v, want %v", tt.service, got, tt.wantServers)
			}
			if _, got := snap.Config.HTTP.Routers[tt.router]; got != tt.wantRouter {
				t.Errorf("router %s present: got %v, want %v", tt.router, got, tt.wantRouter)
			}
			if tt.wantProblem == "" {
				if len(snap.Problems) > 0 {
					t.Errorf("got problems %v, want none", snap.Problems)
				}
				return
			}
			for _, p := range snap.Problems {
				if strings.Contains(p.Source+": "+p.Message, tt.wantProblem) {
					return
				}
			}
			t.Errorf("no problem containing %q in %v", tt.wantProblem, snap.Problems)
		})
	}
}

// TestAssembleReusesParts: parts built once and assembled several times
// (as Run does for services that did not change) give the same snapshot
// as a fresh build, and assembling does not modify them.
func TestAssembleReusesParts(t *testing.T) {
	c, cc := loadCatalogCase(t, "testdata/catalog/018-instances-merge.json")
	c2, cc2 := loadCatalogCase(t, "testdata/catalog/two-services.json")
	if c.b.exposedByDefault || !c2.b.exposedByDefault {
		t.Fatal("test data changed: want exposedByDefault false, then true")
	}
	web := c.b.buildService("web", cc.Services["web"])
	app := c2.b.buildService("app", cc2.Services["app"])
	form := func(ps ...*servicePart) string {
		var b strings.Builder
		for _, p := range ps {
			for _, it := range p.items {
				b.Write(canonical(it.cfg))
			}
			b.Write(canonical(p.problems))
		}
		return b.String()
	}
	before := form(web, app)
	if !strings.Contains(before, "192.0.2.22") {
		t.Fatalf("part form lacks the servers: %s", before)
	}
	first := assemble([]*servicePart{app, web})
	second := assemble([]*servicePart{app, web})
	if got := form(web, app); got != before {
		t.Fatalf("assemble modified its parts")
	}
	if a, b := string(canonical(first)), string(canonical(second)); a != b {
		t.Fatalf("two assemblies differ:\n%s\n%s", a, b)
	}
	if got := servers(first, "web"); len(got) != 3 {
		t.Errorf("servers of web: got %v, want 3", got)
	}
	fresh := c.b.build(cc.Services)
	if a, b := string(canonical(fresh.Config.HTTP.Services["web"])), string(canonical(first.Config.HTTP.Services["web"])); a != b {
		t.Errorf("service web: assembled %s, fresh %s", b, a)
	}
}

// gantry.entrypoints.<name>.address tags ask for a dynamic entrypoint,
// located by instance and tag; instances asking alike merge, services
// asking differently for one name are a problem and ask for nothing.
func TestCatalogEntryPointTags(t *testing.T) {
	c, cc := loadCatalogCase(t, "testdata/catalog/dynamic-entrypoints.json")
	snap := c.b.build(cc.Services)
	if eps := snap.Config.EntryPoints; len(eps) != 1 || eps["redis"] == nil || eps["redis"].Address != ":8001" {
		t.Errorf("entrypoints: %v, want redis on :8001 only", eps)
	}
	if got := snap.Origins["entrypoint redis"]; got != "consul service redis instance n1/redis-1 tag gantry.entrypoints.redis.address" {
		t.Errorf("origin of redis: %q", got)
	}
	if _, ok := snap.Origins["entrypoint clash"]; ok {
		t.Errorf("origin kept for the conflicting entrypoint: %v", snap.Origins)
	}
	var found bool
	for _, p := range snap.Problems {
		if p.Source == "consul service a instance n1/a; service b instance n1/b" && strings.Contains(p.Message, "entrypoint clash defined multiple times") {
			found = true
		}
	}
	if !found {
		t.Errorf("no conflict problem for clash: %v", snap.Problems)
	}
}

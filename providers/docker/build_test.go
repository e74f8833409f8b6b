package docker

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// buildCase is one testdata/*.json file: provider options, what the watcher
// knows about the host, and the inspected containers.
type buildCase struct {
	Options    static.Docker   `json:"options"`
	SelfID     string          `json:"selfID"`
	HostIP     string          `json:"hostIP"`
	Containers []containerInfo `json:"containers"`
}

type goldenOut struct {
	Config   *config.Configuration `json:"config"`
	Problems []providers.Problem   `json:"problems,omitempty"`
	Origins  map[string]string     `json:"origins,omitempty"`
	// Invalid lists what config.Validate finds in the snapshot; it must stay
	// empty: the provider never publishes a structurally invalid object.
	Invalid []string `json:"invalid,omitempty"`
}

func runCase(t *testing.T, path string) providers.Snapshot {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bc buildCase
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&bc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	p, err := New(bc.Options, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s := p.base
	s.selfID, s.hostIP = bc.SelfID, bc.HostIP
	return build(bc.Containers, s)
}

// TestBuildGolden runs build on every testdata/*.json and compares the
// snapshot with the .golden file beside it (go test -update rewrites them).
func TestBuildGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			snap := runCase(t, in)
			out := goldenOut{Config: snap.Config, Problems: snap.Problems, Origins: snap.Origins}
			for _, e := range config.Validate(snap.Config) {
				out.Invalid = append(out.Invalid, e.Error())
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(out); err != nil {
				t.Fatal(err)
			}
			gf := strings.TrimSuffix(in, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(gf, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if d := cmp.Diff(string(want), buf.String()); d != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", gf, d)
			}
			if len(out.Invalid) > 0 {
				t.Errorf("snapshot does not validate: %v", out.Invalid)
			}
		})
	}
}

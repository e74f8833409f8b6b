package label

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// readLabels reads "key=value" lines; blank lines and lines starting with #
// are skipped. The value is everything after the first '='.
func readLabels(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	labels := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: line %q has no '='", path, line)
		}
		labels[k] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return labels
}

type goldenError struct {
	Key     string `json:"key"`
	Object  string `json:"object,omitempty"`
	Error   string `json:"error"`
	Ignored bool   `json:"ignored,omitempty"`
}

type golden struct {
	Config *config.Configuration `json:"config"`
	Errors []goldenError         `json:"errors,omitempty"`
}

func render(t *testing.T, c *config.Configuration, errs []KeyError) []byte {
	t.Helper()
	g := golden{Config: c}
	for _, e := range errs {
		g.Errors = append(g.Errors, goldenError{Key: e.Key, Object: e.Object, Error: e.Err.Error(), Ignored: errors.Is(e, ErrIgnored)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden decodes every testdata/*.labels file with the prefixes gantry
// and traefik and compares config plus errors with the .golden file next to it.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.labels")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".labels")
		t.Run(name, func(t *testing.T) {
			c, errs := Decode(readLabels(t, in), "gantry", "traefik")
			got := render(t, c, errs)
			gf := strings.TrimSuffix(in, ".labels") + ".golden"
			if *update {
				if err := os.WriteFile(gf, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", gf, d)
			}
		})
	}
}

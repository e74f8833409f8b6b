package label

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/gantry-proxy/gantry/config"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Issue 16: every Traefik v3.4–v3.7 option (leasttime, gRPC health
// checks, unhealthyInterval, sticky attributes, failover.errors, retry
// v3.7, errors statusRewrites and errorRequestHeaders, service
// middlewares, parentRefs) decodes from a file and from labels to the same
// model, with no error and no validation problem; the model is pinned by
// testdata/v37/options.golden.
func TestV37OptionsFileAndLabelsAgree(t *testing.T) {
	data, err := os.ReadFile("testdata/v37/options.yml")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := config.Decode(data, config.YAML)
	if err != nil {
		t.Fatalf("file: %v", err)
	}
	fromLabels, errs := Decode(readLabels(t, "testdata/v37/options.labels"), "traefik")
	for _, e := range errs {
		t.Errorf("label error: %v", e)
	}
	if d := cmp.Diff(fromFile.HTTP, fromLabels.HTTP, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("file and labels decode differently (-file +labels):\n%s", d)
	}
	for _, ve := range config.Validate(fromFile) {
		t.Errorf("validation problem: %v", ve)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fromFile); err != nil {
		t.Fatal(err)
	}
	gf := "testdata/v37/options.golden"
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
}

package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// H2specVersion is what scripts/setup/h2spec.sh builds.
const H2specVersion = "2.2.1"

// H2specBin returns the path of the h2spec binary ($GANTRY_H2SPEC_DIR/h2spec,
// else the setup script's cache); a missing one is MissingTool.
func H2specBin(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("GANTRY_H2SPEC_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			MissingTool(t, fmt.Sprintf("h2spec not built: run scripts/setup/h2spec.sh (%v)", err))
		}
		dir = filepath.Join(cache, "gantry", "h2spec-"+H2specVersion)
	}
	bin := filepath.Join(dir, "h2spec")
	if _, err := os.Stat(bin); err != nil {
		MissingTool(t, fmt.Sprintf("h2spec not built: run scripts/setup/h2spec.sh (looked in %s)", dir))
	}
	return bin
}

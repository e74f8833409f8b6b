package reload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// largeRouters is the size of issue 23's file: 80 000 routers, 5.7 MB of
// YAML, under the 16 MiB file limit.
const largeRouters = 80000

// largeTimeout is generous for a linear decode of largeRouters (about a
// CPU-second) on a busy machine; yaml.v3's quadratic map decoding took
// minutes of CPU for the first decode alone, and again at every change of
// any other file.
const largeTimeout = 3 * time.Minute

// Issue 23: one dynamic file of 80 000 routers is applied, and does not
// hold the other files back: each of five edits of a small file applies
// (before, every change of any file decoded the large one again, for
// minutes), and SIGTERM then exits 0.
func TestLargeDynamicFile(t *testing.T) {
	if testing.Short() {
		t.Skip("an 80 000-router file")
	}
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("http:\n  routers:\n")
	for i := range largeRouters {
		fmt.Fprintf(&b, "    r%d:\n      rule: Host(`r%d.test`)\n      service: big\n", i, i)
	}
	fmt.Fprintf(&b, "  services:\n    big:\n      loadBalancer:\n        servers:\n          - url: %s\n", w.URL())
	harness.WriteFile(t, dyn, "big.yml", b.String())
	harness.WriteFile(t, dyn, "small.yml", whoamiConf(w.URL(), "small0"))
	g := harness.StartWith(t, harness.Options{Static: staticConfig(harness.FreeAddr(t), dyn, filepath.Join(work, "gantry.db"), "20ms"), Dir: work})
	url := g.URL(t, "web", "/")
	harness.TryGet(t, largeTimeout, url, harness.Host(fmt.Sprintf("r%d.test", largeRouters-1)), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.TryGet(t, largeTimeout, url, harness.Host("small0.test"), harness.StatusIs(200))
	for i := 1; i <= 5; i++ {
		harness.WriteFile(t, dyn, "small.yml", whoamiConf(w.URL(), fmt.Sprintf("small%d", i)))
		harness.TryGet(t, largeTimeout, url, harness.Host(fmt.Sprintf("small%d.test", i)), harness.StatusIs(200))
	}
	harness.TryGet(t, largeTimeout, url, harness.Host("r0.test"), harness.StatusIs(200))
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := g.Wait(t, largeTimeout); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

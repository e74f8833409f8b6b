package e2e

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// gantry validate on a directory with a broken file and a bad router: exit
// code 1 and one line per problem naming its source; a good directory: 0.
func TestValidateCommand(t *testing.T) {
	bin := harness.GantryBin(t)
	bad := t.TempDir()
	harness.WriteFile(t, bad, "ok.yml", "http:\n  routers:\n    good:\n      rule: Path(`/a`)\n      service: s\n    twohosts:\n      rule: Host(`a.test`, `b.test`)\n      service: s\n  services:\n    s:\n      loadBalancer:\n        servers: [{url: \"http://127.0.0.1:1\"}]\n")
	harness.WriteFile(t, bad, "broken.yml", "http:\n  routers:\n    x:\n      rule: Path(`/x`)\n      service: s\n      priorty: 3\n")
	good := t.TempDir()
	harness.WriteFile(t, good, "ok.yml", "http:\n  routers:\n    good:\n      rule: Path(`/a`)\n      service: s\n  services:\n    s:\n      loadBalancer:\n        servers: [{url: \"http://127.0.0.1:1\"}]\n")

	run := func(dir string) (string, int) {
		cmd := exec.Command(bin, "validate", "--entrypoints.web.address=127.0.0.1:0", "--providers.file.directory="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), exitCode(err)
	}
	out, code := run(bad)
	if code != 1 {
		t.Errorf("bad configuration: exit code %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		filepath.Join(bad, "broken.yml") + ":6:", `unknown field "priorty"`,
		"router twohosts@file: rule:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out, code := run(good); code != 0 || !strings.Contains(out, "valid") {
		t.Errorf("good configuration: exit code %d, want 0\n%s", code, out)
	}

	// A bad command line is exit code 2; a bad static option is 1 naming it.
	if out, err := exec.Command(bin, "serve").CombinedOutput(); exitCode(err) != 2 || !strings.Contains(string(out), `unknown subcommand "serve"`) {
		t.Errorf("bad subcommand: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "validate", "--api.insecure=maybe").CombinedOutput(); exitCode(err) != 1 || !strings.Contains(string(out), "api.insecure") {
		t.Errorf("bad option: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), "Version:") {
		t.Errorf("version: %v\n%s", err, out)
	}
}

// exitCode returns the exit code of a finished command, -1 when it did not
// run.
func exitCode(err error) int {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

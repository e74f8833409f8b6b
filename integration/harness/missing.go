package harness

import (
	"os"
	"testing"
)

// MissingTool stops a test that needs a tool which is not installed: a
// skip naming the tool and the setup script on a developer's machine, a
// failure under CI (CI set), where .ci/run installs every tool, so a
// missing one is a broken setup, never a silently skipped suite.
func MissingTool(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: %s", msg)
	}
	t.Skip(msg)
}

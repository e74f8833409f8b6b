package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
)

// upgradeEnv drops an earlier upgrade's variables and names each socket
// by its descriptor in the child (3 + its index in ExtraFiles).
func TestUpgradeEnv(t *testing.T) {
	socks := []handoff.Socket{{Key: "tcp/web"}, {Key: "tcp/web"}, {Key: "h3/web"}, {Key: "udp/dns"}}
	env := upgradeEnv([]string{"A=1", handoff.EnvFDs + "=tcp/old=3", handoff.EnvReady + "=4", "B=2"}, socks, 7)
	want := []string{"A=1", "B=2", handoff.EnvFDs + "=tcp/web=3,4;h3/web=5;udp/dns=6", handoff.EnvReady + "=7"}
	if !slices.Equal(env, want) {
		t.Fatalf("upgradeEnv =\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
}

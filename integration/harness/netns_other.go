//go:build !linux

package harness

import (
	"syscall"
	"testing"
)

// MainNetns is Main on systems without network namespaces: PodIP is
// MissingTool there.
func MainNetns(m *testing.M, extra ...string) {
	netnsReason = "network namespaces need Linux"
	Main(m)
}

// deathSignal: no parent-death signal outside Linux.
func deathSignal() *syscall.SysProcAttr { return nil }

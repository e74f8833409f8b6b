package generation_test

import (
	"testing"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane"
	"github.com/gantry-proxy/gantry/dataplane/internal/dptest"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// newHarness starts a dataplane.Server on eps (nil: "web" on
// 127.0.0.1:0) whose configurations Apply compiles into generations.
func newHarness(t testing.TB, eps map[string]*static.EntryPoint, obs observe.Observer) *dptest.Harness[*dataplane.Server] {
	t.Helper()
	return dptest.New(t, eps, obs, dataplane.NewServer, dataplane.RedirectRoutes)
}

package dashboard

import (
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// TestMain runs the suite in a network namespace of its own (as root on
// Linux; on the host otherwise). Chromium fails every request it has in
// flight with net::ERR_NETWORK_CHANGED, and does not retry them, when an
// address of its host comes or goes, and integration/docker, which often
// runs beside this package, adds and removes a bridge address with every
// Docker network: dashboards lost module and API requests in CI (bad58d8
// reproduced it). In a namespace of its own the browser sees only its
// loopback.
func TestMain(m *testing.M) { harness.MainNetns(m) }

package acme

import (
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

type pebble = harness.Pebble

func newPebble(t testing.TB, httpPort, tlsPort int, validity time.Duration) *pebble {
	return harness.NewPebble(t, httpPort, tlsPort, validity)
}

func freePort(t testing.TB) int    { return harness.FreePort(t) }
func freeDNSPort(t testing.TB) int { return harness.FreeDNSPort(t) }

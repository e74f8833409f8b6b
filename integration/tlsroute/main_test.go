// Package tlsroute tests, through the gantry binary and real TLS clients,
// which TLS configuration a request really gets and which router answers
// it, and on which entrypoints: 421 Misdirected Request when the SNI chose
// other TLS options than the Host's routers require, TLS options that
// fail closed, TCP and HTTPS routers sharing an entrypoint, and the
// default entrypoints.
package tlsroute

import (
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// wait bounds every condition the tests wait for: generous, the machine
// is shared.
const wait = 30 * time.Second

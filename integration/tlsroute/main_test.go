// Package tlsroute tests, through the gantry binary and real TLS clients,
// which TLS configuration a request really gets and which router answers
// it: 421 Misdirected Request when the SNI chose other TLS options than
// the Host's routers require, TLS options that fail closed, and TCP and
// HTTPS routers sharing an entrypoint.
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

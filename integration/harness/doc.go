// Package harness runs the real gantry and whoami binaries for integration
// tests, in the style of Traefik's integration/try package.
//
// The binaries are built once per test process with `go build` into a
// temporary directory (removed by Main). Every process a test starts is
// stopped in t.Cleanup, and its output is dumped into the test log when the
// test failed. Nothing here sleeps for a fixed time: waiting is done by Try,
// which polls a condition until it holds or a deadline passes.
//
// Run integration tests with -count=1 (scripts/test.sh does): go test's
// result cache does not see the sources of the binaries built here, so a
// cached result may predate a change to cmd/gantry.
//
// Typical use:
//
//	func TestMain(m *testing.M) { harness.Main(m) }
//
//	func TestRoute(t *testing.T) {
//		backend := harness.StartWhoami(t, "w1")
//		web := harness.FreeAddr(t)
//		g := harness.Start(t, fmt.Sprintf(staticYAML, web, dir))
//		harness.TryGet(t, 10*time.Second, "http://"+web+"/", harness.Host("a.test"), harness.StatusIs(200))
//	}
package harness

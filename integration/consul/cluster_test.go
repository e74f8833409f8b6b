package consul

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// cluster.consul: two gantry instances register in a real Consul agent
// with a passing TTL check and their configuration version in the meta;
// one killed (SIGKILL: no deregistration) turns critical within its TTL
// while the other stays passing; one stopped gracefully deregisters.
func TestClusterRegistration(t *testing.T) {
	a := startAgent(t)
	start := func(id string) *harness.Gantry {
		return harness.Start(t, fmt.Sprintf(`
entryPoints:
  web:
    address: %q
  traefik:
    address: %q
api:
  insecure: true
cluster:
  consul:
    address: %q
  instanceID: %s
  ttl: 2s
`, harness.FreeAddr(t), harness.FreeAddr(t), a.Addr, id))
	}
	g1, g2 := start("gantry-one"), start("gantry-two")
	health := func() (map[string]string, map[string]string, error) {
		entries, _, err := a.API.Health().Service("gantry", "", false, nil)
		if err != nil {
			return nil, nil, err
		}
		status, version := map[string]string{}, map[string]string{}
		for _, e := range entries {
			status[e.Service.ID] = e.Checks.AggregatedStatus()
			version[e.Service.ID] = e.Service.Meta["configVersion"]
		}
		return status, version, nil
	}
	harness.Try(t, e2eTimeout, func() error {
		st, ver, err := health()
		if err != nil {
			return err
		}
		if st["gantry-one"] != api.HealthPassing || st["gantry-two"] != api.HealthPassing {
			return fmt.Errorf("status %v, want both passing", st)
		}
		if ver["gantry-one"] == "" || ver["gantry-one"] != ver["gantry-two"] {
			return fmt.Errorf("config versions %v, want one equal non-empty version", ver)
		}
		return nil
	})

	// The API lists the cluster: both instances, one version, agreeing.
	var cs struct {
		Service   string
		Instances []struct {
			ID, ConfigVersion, Status string
			Self                      bool
		}
		Agree bool
	}
	r, err := harness.Get(g2.URL(t, "traefik", "/api/cluster"))
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("/api/cluster: %v %+v", err, r)
	}
	if err := json.Unmarshal([]byte(r.Body), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs.Instances) != 2 || !cs.Agree || cs.Instances[1].ID != "gantry-two" || !cs.Instances[1].Self || cs.Instances[0].Self ||
		cs.Instances[0].ConfigVersion == "" || cs.Instances[0].ConfigVersion != cs.Instances[1].ConfigVersion {
		t.Fatalf("/api/cluster: %s", r.Body)
	}

	killed := time.Now()
	if err := g1.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	harness.Try(t, e2eTimeout, func() error {
		st, _, err := health()
		if err != nil {
			return err
		}
		if st["gantry-one"] != api.HealthCritical {
			return fmt.Errorf("killed instance %q, want critical", st["gantry-one"])
		}
		if st["gantry-two"] != api.HealthPassing {
			return fmt.Errorf("live instance %q, want passing", st["gantry-two"])
		}
		return nil
	})
	t.Logf("killed instance critical after %s (ttl 2s)", time.Since(killed).Round(100*time.Millisecond))

	// The agent stops: the registration is down, visibly (issue 23), and
	// restored once the agent is back.
	registration := func(state string) {
		t.Helper()
		harness.Try(t, e2eTimeout, func() error {
			r, err := harness.Get(g2.URL(t, "traefik", "/api/providers"))
			if err != nil {
				return err
			}
			var items []struct{ Name, State string }
			if err := json.Unmarshal([]byte(r.Body), &items); err != nil {
				return err
			}
			for _, it := range items {
				if it.Name == "cluster registration" && it.State == state {
					return nil
				}
			}
			return fmt.Errorf("/api/providers lists %+v, want the cluster registration %s", items, state)
		})
	}
	a.Stop(t)
	registration("down")
	harness.TryGet(t, e2eTimeout, g2.URL(t, "traefik", "/api/problems"), harness.BodyContains(`"source":"cluster registration"`), harness.BodyContains("unreachable"))
	a.Start(t)
	registration("ok")
	harness.TryGet(t, e2eTimeout, g2.URL(t, "traefik", "/api/problems"), harness.BodyLacks("cluster registration"))
	harness.Try(t, e2eTimeout, func() error {
		if st, _, err := health(); err != nil || st["gantry-two"] != api.HealthPassing {
			return fmt.Errorf("after the agent restarted: %v %v, want gantry-two passing", st, err)
		}
		return nil
	})

	g2.Stop(t)
	harness.Try(t, e2eTimeout, func() error {
		st, _, err := health()
		if err != nil {
			return err
		}
		if _, ok := st["gantry-two"]; ok {
			return fmt.Errorf("stopped instance still registered: %v", st)
		}
		return nil
	})
}

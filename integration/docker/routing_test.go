package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/gantry-proxy/gantry/integration/harness"
	"github.com/gantry-proxy/gantry/providers"
)

// wait is the deadline of conditions that follow one Docker event.
const wait = 30 * time.Second

// TestDocker runs the engine scenarios in order; the daemon outage comes
// last because it restarts the engine under the other scenarios.
func TestDocker(t *testing.T) {
	e := getEnv(t)
	t.Run("LabeledContainerIsRoutable", func(t *testing.T) { testRoutable(t, e) })
	t.Run("ScaledReplicasThenOneStopped", func(t *testing.T) { testScaled(t, e) })
	t.Run("RecreatedWithNewIP", func(t *testing.T) { testRecreated(t, e) })
	t.Run("NetworkConnectedAfterStart", func(t *testing.T) { testLateNetwork(t, e) })
	t.Run("HealthStartingAndUnhealthyArePending", func(t *testing.T) { testHealth(t, e) })
	t.Run("LabelErrorsAreProblems", func(t *testing.T) { testLabelProblems(t, e) })
	t.Run("TraefikLabelSemantics", func(t *testing.T) { testTraefikLabelSemantics(t, e) })
	t.Run("TCPRedisByLabels", func(t *testing.T) { testTCPRedisByLabels(t, e) })
	t.Run("StartToFirst200", func(t *testing.T) { testStartLatency(t, e) })
	t.Run("DaemonStoppedAndBack", func(t *testing.T) { testOutage(t, e) })
}

func testRoutable(t *testing.T, e *env) {
	e.run(t, &whoami{name: "app1", labels: rule("app1", "app1.test")})
	harness.TryGet(t, wait, e.url("/"), harness.Host("app1.test"), harness.StatusIs(200), harness.BodyContains("Name: app1"))
	// A container without labels is exposed by default under the default
	// rule, Host(`{{ normalize .Name }}`).
	e.run(t, &whoami{name: "plain_one"})
	harness.TryGet(t, wait, e.url("/"), harness.Host("plain-one"), harness.StatusIs(200), harness.BodyContains("Name: plain_one"))
	// Gantry's own container is not exposed by default: its default router
	// would route to itself.
	r := harness.TryGet(t, wait, "http://"+e.api+"/api/http/routers", harness.StatusIs(200), harness.BodyContains("plain-one@docker"))
	if strings.Contains(r.Body, `"`+gantryName+`@docker"`) {
		t.Errorf("gantry's own container is routed: %.500s", r.Body)
	}
}

// names GETs host n times and counts answers per "Name:" line.
func (e *env) names(host string, n int) (map[string]int, error) {
	got := map[string]int{}
	for range n {
		r, err := harness.Get(e.url("/"), harness.Host(host))
		if err != nil {
			return nil, err
		}
		if r.StatusCode != 200 {
			got[fmt.Sprintf("status %d", r.StatusCode)]++
			continue
		}
		for l := range strings.Lines(r.Body) {
			if name, ok := strings.CutPrefix(strings.TrimSpace(l), "Name: "); ok {
				got[name]++
			}
		}
	}
	return got, nil
}

func testScaled(t *testing.T, e *env) {
	labels := map[string]string{
		"com.docker.compose.project":      "scale",
		"com.docker.compose.service":      "web",
		"gantry.http.routers.scaled.rule": "Host(`scaled.test`)",
	}
	id1 := e.run(t, &whoami{name: "scale-web-1", labels: labels})
	e.run(t, &whoami{name: "scale-web-2", labels: labels})
	harness.Try(t, wait, func() error {
		got, err := e.names("scaled.test", 10)
		if err != nil {
			return err
		}
		if got["scale-web-1"] == 0 || got["scale-web-2"] == 0 || len(got) != 2 {
			return fmt.Errorf("want traffic on both replicas, got %v", got)
		}
		return nil
	})
	// One stopped: removed from the service; the other takes all traffic.
	stop := 1
	if err := e.eng.cli.ContainerStop(context.Background(), id1, container.StopOptions{Timeout: &stop}); err != nil {
		t.Fatal(err)
	}
	harness.Try(t, wait, func() error {
		got, err := e.names("scaled.test", 10)
		if err != nil {
			return err
		}
		if got["scale-web-2"] != 10 {
			return fmt.Errorf("want every request on scale-web-2, got %v", got)
		}
		return nil
	})
}

// testRecreated is case 015: a container removed and created again gets a
// new IP; the route follows without restarting Gantry.
func testRecreated(t *testing.T, e *env) {
	labels := rule("api", "api.test")
	labels["gantry.http.services.api.loadbalancer.server.port"] = "80"
	old := e.run(t, &whoami{name: "api-old", labels: labels})
	oldIP := e.ip(t, old)
	harness.TryGet(t, wait, e.url("/"), harness.Host("api.test"), harness.StatusIs(200), harness.BodyContains("Name: api-old"))
	if err := e.eng.cli.ContainerRemove(context.Background(), old, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	// Nothing runs: the router is gone with its only container (404).
	harness.TryGet(t, wait, e.url("/"), harness.Host("api.test"), harness.StatusIs(404))
	// A filler takes the freed address so the new container gets another.
	e.run(t, &whoami{name: "filler", labels: map[string]string{"gantry.enable": "false"}})
	nu := e.run(t, &whoami{name: "api-new", labels: labels})
	if newIP := e.ip(t, nu); newIP == oldIP {
		t.Fatalf("new container got the old IP %s; the test needs a new one", oldIP)
	}
	harness.TryGet(t, wait, e.url("/"), harness.Host("api.test"), harness.StatusIs(200), harness.BodyContains("Name: api-new"))
}

// testLateNetwork is case 015's variant: the container starts on another
// network and is connected to Gantry's network afterwards.
func testLateNetwork(t *testing.T, e *env) {
	ctx := context.Background()
	if _, err := e.eng.cli.NetworkCreate(ctx, "gantry-it-other", network.CreateOptions{Driver: "bridge"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if e.eng.cmd != nil {
			e.eng.cli.NetworkRemove(context.Background(), "gantry-it-other")
		}
	})
	labels := rule("late", "late.test")
	labels["gantry.docker.network"] = netName
	id := e.run(t, &whoami{name: "late", labels: labels, network: "gantry-it-other"})
	// Reachable only over gantry-it-other, which Gantry does not share: the
	// label names gantry-it, so Gantry warns and uses the other network;
	// requests fail (502/504) until the network is connected.
	harness.Try(t, wait, func() error {
		ps, err := e.problems()
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(ps, func(p providers.Problem) bool {
			return p.Source == "container late" && strings.Contains(p.Message, `network "gantry-it" not found`)
		}) {
			return fmt.Errorf("no network warning for container late in %v", ps)
		}
		return nil
	})
	if err := e.eng.cli.NetworkConnect(ctx, netName, id, nil); err != nil {
		t.Fatal(err)
	}
	harness.TryGet(t, wait, e.url("/"), harness.Host("late.test"), harness.StatusIs(200), harness.BodyContains("Name: late"))
}

// problems reads Gantry's /api/problems.
func (e *env) problems() ([]providers.Problem, error) {
	r, err := harness.Get("http://" + e.api + "/api/problems")
	if err != nil {
		return nil, err
	}
	if r.StatusCode != 200 {
		return nil, fmt.Errorf("/api/problems: status %d: %.200s", r.StatusCode, r.Body)
	}
	var ps []providers.Problem
	if err := json.Unmarshal([]byte(r.Body), &ps); err != nil {
		return nil, fmt.Errorf("/api/problems: %w: %.200s", err, r.Body)
	}
	return ps, nil
}

// tryProblem polls /api/problems until one from source matches severity and
// contains msg.
func (e *env) tryProblem(t *testing.T, source string, sev providers.Severity, msg string) {
	t.Helper()
	harness.Try(t, wait, func() error {
		ps, err := e.problems()
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Source == source && p.Severity == sev && strings.Contains(p.Message, msg) {
				return nil
			}
		}
		return fmt.Errorf("no %s problem %q from %q in %v", sev, msg, source, ps)
	})
}

// testHealth is case 014: starting and unhealthy containers are not routed
// and are listed as pending, with the reason.
func testHealth(t *testing.T, e *env) {
	// starting: the first check is an hour away. A routed companion starts
	// with it: the aggregator applies a new configuration only when the
	// routing configuration changes, not when only problems do, so without
	// it the pending problem would reach the API only with the next change.
	e.run(t, &whoami{name: "slow", labels: rule("slow", "slow.test"),
		health: &container.HealthConfig{Test: []string{"CMD", "/probe", "http://127.0.0.1/health"}, Interval: time.Hour}})
	e.run(t, &whoami{name: "slow-companion", labels: rule("companion", "companion.test")})
	harness.TryGet(t, wait, e.url("/"), harness.Host("companion.test"), harness.StatusIs(200))
	e.tryProblem(t, "container slow", providers.SeverityPending, "health status starting")
	harness.TryGet(t, wait, e.url("/"), harness.Host("slow.test"), harness.StatusIs(404))

	w := &whoami{name: "sick", labels: rule("sick", "sick.test"), publish: true,
		health: &container.HealthConfig{Test: []string{"CMD", "/probe", "http://127.0.0.1/health"}, Interval: 300 * time.Millisecond, Retries: 1}}
	e.run(t, w)
	harness.TryGet(t, wait, e.url("/"), harness.Host("sick.test"), harness.StatusIs(200), harness.BodyContains("Name: sick"))
	setHealth(t, w.hostPort, 503)
	harness.TryGet(t, wait, e.url("/"), harness.Host("sick.test"), harness.StatusIs(404))
	e.tryProblem(t, "container sick", providers.SeverityPending, "health status unhealthy (last check: exit 1: 503 Service Unavailable)")
	setHealth(t, w.hostPort, 200)
	harness.TryGet(t, wait, e.url("/"), harness.Host("sick.test"), harness.StatusIs(200), harness.BodyContains("Name: sick"))
}

// setHealth sets what the whoami's /health answers, over its published port.
func setHealth(t *testing.T, hostPort string, code int) {
	t.Helper()
	resp, err := http.Post("http://"+hostPort+"/health", "text/plain", strings.NewReader(itoa(code)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /health: status %d", resp.StatusCode)
	}
}

// testLabelProblems: a bad label is reported with the container and the full
// key, and disables only its own router.
func testLabelProblems(t *testing.T, e *env) {
	labels := rule("good", "good.test")
	labels["gantry.http.routers.good.service"] = "svc"
	labels["gantry.http.routers.bad.rule"] = "Host(`bad.test`)"
	labels["gantry.http.routers.bad.priority"] = "high"
	labels["gantry.http.routers.bad.service"] = "svc"
	labels["gantry.http.services.svc.loadbalancer.server.port"] = "80"
	e.run(t, &whoami{name: "mixed", labels: labels})
	harness.TryGet(t, wait, e.url("/"), harness.Host("good.test"), harness.StatusIs(200), harness.BodyContains("Name: mixed"))
	e.tryProblem(t, "container mixed label gantry.http.routers.bad.priority", providers.SeverityError, `invalid integer "high"`)
	harness.TryGet(t, wait, e.url("/"), harness.Host("bad.test"), harness.StatusIs(404))
}

// testTraefikLabelSemantics is cases 036 and 010 with a real dockerd (issue
// 15): traefik.enable takes strconv.ParseBool's spellings ("1" enables,
// "yes" is an error that leaves the container out), and a root that only
// looks like http ("traefik.https.…") leaves the whole container out, as
// Traefik does, instead of routing it by its default rule.
func testTraefikLabelSemantics(t *testing.T, e *env) {
	e.run(t, &whoami{name: "bool-one", labels: map[string]string{"traefik.enable": "1", "traefik.http.routers.one.rule": "Host(`one.test`)"}})
	e.run(t, &whoami{name: "bool-yes", labels: map[string]string{"traefik.enable": "yes", "traefik.http.routers.yes.rule": "Host(`yes.test`)"}})
	e.run(t, &whoami{name: "root-typo", labels: map[string]string{"traefik.https.routers.z.rule": "Host(`z.test`)"}})
	harness.TryGet(t, wait, e.url("/"), harness.Host("one.test"), harness.StatusIs(200), harness.BodyContains("Name: bool-one"))
	e.tryProblem(t, "container bool-yes label traefik.enable", providers.SeverityError, `invalid boolean "yes"`)
	e.tryProblem(t, "container root-typo label traefik.https.routers.z.rule", providers.SeverityError, `unknown root "https"`)
	for _, host := range []string{"yes.test", "bool-yes", "z.test", "root-typo"} {
		harness.TryGet(t, wait, e.url("/"), harness.Host(host), harness.StatusIs(404))
	}
}

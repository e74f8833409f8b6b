package ingress

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// timeout bounds every wait for a change to be routed (generous: the
// machine is shared).
const timeout = 60 * time.Second

// env is one test's cluster and gantry.
type env struct {
	k  *harness.Kube
	ns string
	g  *harness.Gantry
}

// startGantry starts gantry with entrypoints web, websecure and traefik
// (the API) and providers.kubernetesIngress pointing at k plus the
// options in extra (YAML lines, indented under the provider).
func startGantry(t testing.TB, k *harness.Kube, extra ...string) *harness.Gantry {
	t.Helper()
	web, websecure, api := harness.FreeAddr(t), harness.FreeAddr(t), harness.FreeAddr(t)
	opts := ""
	for _, e := range extra {
		opts += "    " + e + "\n"
	}
	return harness.Start(t, fmt.Sprintf(`
entryPoints:
  web: {address: %q}
  websecure: {address: %q}
  traefik: {address: %q}
api: {insecure: true}
providers:
  providersThrottleDuration: 50ms
  kubernetesIngress:
    endpoint: %q
    token: %q
    certAuthFilePath: %q
%s`, web, websecure, api, k.URL, k.Token, k.CAFile, opts))
}

// backend starts whoami "name" on pod address ip and makes it the only
// endpoint of slice <svc>-<name> of Service ns/svc (port "http" 80).
func backend(t *testing.T, k *harness.Kube, ns, svc, name, ip string) *harness.Whoami {
	t.Helper()
	w := harness.StartWhoamiAt(t, name, ip)
	k.WriteService(t, ns, svc, nil, harness.ServicePort{Name: "http", Port: 80})
	k.SetEndpoints(t, ns, svc, svc+"-"+name, slicePorts(t, w), harness.ReadyEndpoint(ip))
	return w
}

// slicePorts is the EndpointSlice port "http" of w's port.
func slicePorts(t testing.TB, w *harness.Whoami) []harness.SlicePort {
	t.Helper()
	_, p, _ := strings.Cut(w.Addr, ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("whoami address %s: %v", w.Addr, err)
	}
	return []harness.SlicePort{{Name: "http", Port: int32(n)}}
}

// problem is an entry of /api/problems.
type problem struct {
	Provider, Source, Message, Severity string
	Objects                             []string
}

// problems returns gantry's /api/problems.
func problems(g *harness.Gantry) ([]problem, error) {
	resp, err := http.Get("http://" + g.EntryPoints["traefik"] + "/api/problems")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ps []problem
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		return nil, fmt.Errorf("decode /api/problems: %w", err)
	}
	return ps, nil
}

// waitProblem waits for a problem of provider kubernetes whose Source
// contains src and Message contains msg, and returns it.
func waitProblem(t *testing.T, g *harness.Gantry, src, msg string) problem {
	t.Helper()
	var got problem
	harness.Try(t, timeout, func() error {
		ps, err := problems(g)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Provider == "kubernetes" && strings.Contains(p.Source, src) && strings.Contains(p.Message, msg) {
				got = p
				return nil
			}
		}
		return fmt.Errorf("no problem with source %q and message %q in %+v", src, msg, ps)
	})
	return got
}

// noProblem waits until no kubernetes problem's Source or Message
// contains s.
func noProblem(t *testing.T, g *harness.Gantry, s string) {
	t.Helper()
	harness.Try(t, timeout, func() error {
		ps, err := problems(g)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Provider == "kubernetes" && (strings.Contains(p.Source, s) || strings.Contains(p.Message, s)) {
				return fmt.Errorf("problem still there: %+v", p)
			}
		}
		return nil
	})
}

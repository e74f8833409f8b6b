package ingress

import (
	"testing"
	"time"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// outage is how long the API server is stopped; resumeTimeout bounds
// how long the watches take to resume after it.
const (
	outage        = 30 * time.Second
	resumeTimeout = 3 * time.Minute
)

// TestAPIServerOutageKeepsServing stops kube-apiserver for 30 s under
// steady load: no request fails, /api/problems names the API server while
// it is down, the problem clears when it is back, and a change made after
// the restart is routed (the watches resumed).
func TestAPIServerOutageKeepsServing(t *testing.T) {
	k := harness.StartKube(t)
	g := startGantry(t, k)
	backend(t, k, "default", "web", "pod1", harness.PodIP(t, 1))
	k.Apply(t, rolloutIngress)
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(200), harness.BodyContains("Name: pod1"))
	noProblem(t, g, "unreachable")

	l := startLoad("http://"+g.EntryPoints["web"]+"/", "app.test", 4)
	k.StopAPIServer(t)
	down := time.Now()
	waitProblem(t, g, "kubernetes API server "+k.URL, "unreachable since")
	harness.TryGet(t, timeout, g.URL(t, "web", "/"), harness.Host("app.test"), harness.StatusIs(200))
	if rest := outage - time.Since(down); rest > 0 {
		<-time.After(rest) // the outage lasts its 30 s, under load
	}
	k.StartAPIServer(t)
	noProblem(t, g, "unreachable")
	l.stop(t)

	backend(t, k, "default", "other", "pod2", harness.PodIP(t, 2))
	k.Apply(t, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: after
spec:
  rules:
  - host: after.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: other
            port:
              number: 80
`)
	// client-go's informers relist after an outage on their own backoff
	// (exponential up to 30 s, with as much jitter again): up to about a
	// minute after the API server is back, per informer.
	harness.TryGet(t, resumeTimeout, g.URL(t, "web", "/"), harness.Host("after.test"), harness.StatusIs(200), harness.BodyContains("Name: pod2"))
}

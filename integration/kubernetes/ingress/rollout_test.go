package ingress

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-proxy/gantry/integration/harness"
)

const rolloutIngress = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
spec:
  rules:
  - host: app.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
`

// TestRollingUpdateLosesNothing replaces three pods one by one as a
// Deployment's rolling update does — new pod ready, then the old one
// terminating (still serving), then gone — under steady load: no request
// fails, the terminating pod gets no new request once gantry has seen it
// terminating, and WebSockets opened before the update keep working
// while their pods live.
func TestRollingUpdateLosesNothing(t *testing.T) {
	k := harness.StartKube(t)
	g := startGantry(t, k)
	const ns, svc = "default", "web"
	k.WriteService(t, ns, svc, nil, harness.ServicePort{Name: "http", Port: 80})
	type pod struct {
		name, ip string
		w        *harness.Whoami
	}
	start := func(i int) pod {
		p := pod{name: fmt.Sprintf("pod%d", i), ip: harness.PodIP(t, i)}
		p.w = harness.StartWhoamiAt(t, p.name, p.ip)
		k.SetEndpoints(t, ns, svc, svc+"-"+p.name, slicePorts(t, p.w), harness.ReadyEndpoint(p.ip))
		return p
	}
	old := []pod{start(1), start(2), start(3)}
	k.Apply(t, rolloutIngress)
	for _, p := range old {
		harness.Try(t, timeout, func() error {
			s, err := servers(g, "default-web-80@kubernetes")
			if err == nil && !strings.Contains(s, p.w.Addr) {
				err = fmt.Errorf("%s not among the servers yet: %s", p.w.Addr, s)
			}
			return err
		})
	}
	var ws []*wsConn
	for range 6 {
		c := dialWS(t, g.EntryPoints["web"], "app.test")
		if err := c.echo("hello"); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, c)
	}
	l := startLoad("http://"+g.EntryPoints["web"]+"/", "app.test", 4)
	var fresh []pod
	for i, o := range old {
		n := start(4 + i)
		harness.Try(t, timeout, func() error {
			if l.count(n.name) == 0 {
				return fmt.Errorf("no answer from the new %s yet", n.name)
			}
			return nil
		})
		fresh = append(fresh, n)
		k.SetEndpoints(t, ns, svc, svc+"-"+o.name, slicePorts(t, o.w), harness.TerminatingEndpoint(o.ip))
		// A terminating endpoint that still serves stays listed, fenced: it
		// keeps the sticky clients pinned to it and takes no new request.
		harness.Try(t, timeout, func() error {
			s, err := servers(g, "default-web-80@kubernetes")
			if err != nil {
				return err
			}
			var svc struct {
				LoadBalancer struct {
					Servers []struct {
						URL    string `json:"url"`
						Fenced bool   `json:"fenced"`
					} `json:"servers"`
				} `json:"loadBalancer"`
			}
			if err := json.Unmarshal([]byte(s), &svc); err != nil {
				return fmt.Errorf("service: %w: %s", err, s)
			}
			for _, sv := range svc.LoadBalancer.Servers {
				if strings.Contains(sv.URL, o.w.Addr) && !sv.Fenced {
					return fmt.Errorf("terminating %s still takes new requests: %s", o.w.Addr, s)
				}
			}
			return nil
		})
		// From here on the terminating pod gets nothing new.
		before := l.count(o.name)
		after := l.ok.Load()
		harness.Try(t, timeout, func() error {
			if l.ok.Load() < after+200 {
				return fmt.Errorf("waiting for 200 more answers")
			}
			return nil
		})
		if got := l.count(o.name); got != before {
			t.Errorf("terminating %s got %d new requests", o.name, got-before)
		}
	}
	for i, c := range ws {
		if err := c.echo(fmt.Sprintf("still there %d", i)); err != nil {
			t.Errorf("websocket %d opened before the update: %v", i, err)
		}
	}
	// The old pods exit (their open connections go with them) and their
	// slices are deleted.
	for _, o := range old {
		o.w.Stop(t)
		k.Kubectl(t, "delete", "endpointslice", svc+"-"+o.name)
	}
	harness.Try(t, timeout, func() error {
		s, err := servers(g, "default-web-80@kubernetes")
		for _, n := range fresh {
			if err == nil && !strings.Contains(s, n.w.Addr) {
				err = fmt.Errorf("%s missing: %s", n.w.Addr, s)
			}
		}
		return err
	})
	// More load on the new pods only.
	last := l.ok.Load()
	harness.Try(t, timeout, func() error {
		if l.ok.Load() < last+200 {
			return fmt.Errorf("waiting for 200 more answers")
		}
		return nil
	})
	l.stop(t)
}

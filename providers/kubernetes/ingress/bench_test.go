package ingress

import (
	"fmt"
	"testing"

	netv1 "k8s.io/api/networking/v1"
)

// BenchmarkBuild5000 is one full build of the snapshot from caches
// holding 5 000 Ingresses over 5 000 Services of 4 endpoints each: the
// provider's share of the work after any change.
func BenchmarkBuild5000(b *testing.B) {
	f := newFixture()
	for i := range 5000 {
		svc := fmt.Sprintf("app%d", i)
		f.svc("default", svc, nil, fmt.Sprintf("10.245.%d.1", i/250), fmt.Sprintf("10.245.%d.2", i/250), fmt.Sprintf("10.245.%d.3", i/250), fmt.Sprintf("10.245.%d.4", i/250))
		_ = f.ings.Add(ingress("default", svc, nil, nil, irule(svc+".test", path("/", netv1.PathTypePrefix, svc))))
	}
	c := f.cluster()
	b.ReportAllocs()
	for b.Loop() {
		snap, _ := build(settings{}, c)
		if len(snap.Config.HTTP.Routers) != 5000 {
			b.Fatal(len(snap.Config.HTTP.Routers))
		}
	}
}

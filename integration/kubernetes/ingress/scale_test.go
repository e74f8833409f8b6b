package ingress

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// BenchmarkScaleEndpointSliceToRouted measures providers.kubernetesIngress
// at 5 000 Ingresses (one host each) over 5 000 Services with 4 endpoints
// each (20 000 endpoints): after the cluster is loaded and routed, one
// EndpointSlice at a time is changed to point at a fresh backend, and the
// time until a request to that Ingress's host reaches the new backend is
// recorded. Reported: p50 and p99 of that time, gantry's CPU time per
// change (user+sys from /proc), and its RSS. Run with
//
//	go test -run '^$' -bench ScaleEndpointSlice -benchtime 1x ./integration/kubernetes/ingress/
//
// (GANTRY_SCALE_INGRESSES overrides 5 000; GANTRY_SCALE_CHANGES the 40
// changes.)
func BenchmarkScaleEndpointSliceToRouted(b *testing.B) {
	n := envInt("GANTRY_SCALE_INGRESSES", 5000)
	changes := envInt("GANTRY_SCALE_CHANGES", 40)
	k := harness.StartKube(b)
	const ns = "default"
	ctx := context.Background()
	// Objects are created by 16 writers; endpoints point at pod
	// addresses where nothing listens except for the changed slices.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if err := createApp(ctx, k, ns, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	g := startGantry(b, k)
	loaded := time.Now()
	harness.Try(b, 10*time.Minute, func() error {
		r, err := harness.Get(g.URL(b, "traefik", fmt.Sprintf("/api/http/routers/default-app%d-app%d-test@kubernetes", n-1, n-1)))
		if err == nil && r.StatusCode != 200 {
			err = fmt.Errorf("last Ingress not routed yet: %d", r.StatusCode)
		}
		return err
	})
	b.Logf("%d Ingresses, %d endpoints routed %v after gantry started", n, 4*n, time.Since(loaded).Round(time.Millisecond))

	ip := harness.PodIP(b, 20)
	var lat []time.Duration
	cpu0 := cpuTime(b, g.Pid())
	b.ResetTimer()
	for c := range changes {
		w := harness.StartWhoamiAt(b, fmt.Sprintf("fresh%d", c), ip)
		i := (c * 7919) % n
		host := fmt.Sprintf("app%d.test", i)
		port := slicePorts(b, w)[0].Port
		start := time.Now()
		if err := k.SetEndpointsErr(ns, fmt.Sprintf("app%d", i), fmt.Sprintf("app%d-a", i), []harness.SlicePort{{Name: "http", Port: port}},
			harness.ReadyEndpoint(ip)); err != nil {
			b.Fatal(err)
		}
		want := fmt.Sprintf("Name: fresh%d", c)
		for {
			r, err := harness.Get(g.URL(b, "web", "/"), harness.Host(host))
			if err == nil && r.StatusCode == 200 && strings.Contains(r.Body, want) {
				break
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("change %d not routed after 5 min: %v", c, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		lat = append(lat, time.Since(start))
		w.Stop(b)
	}
	b.StopTimer()
	cpu := cpuTime(b, g.Pid()) - cpu0
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	rss := rssKiB(b, g.Pid())
	b.ReportMetric(float64(p(0.5).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(p(0.99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(changes), "cpu-ms/change")
	b.ReportMetric(float64(rss)/1024, "rss-MiB")
	b.Logf("EndpointSlice update to routed over %d changes: p50 %v, p99 %v, max %v; CPU %v per change; RSS %d MiB",
		changes, p(0.5), p(0.99), lat[len(lat)-1], cpu/time.Duration(changes), rss/1024)
}

// createApp creates Service app<i> (port http 80), its EndpointSlice
// app<i>-a with 4 ready endpoints, and Ingress app<i> for host
// app<i>.test.
func createApp(ctx context.Context, k *harness.Kube, ns string, i int) error {
	name := fmt.Sprintf("app%d", i)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := k.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("service %s: %w", name, err)
	}
	pn, port := "http", int32(8080)
	es := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-a",
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: &pn, Port: &port}}}
	for e := range 4 {
		ready := true
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.245.%d.%d", (i*4+e)/250, 1+(i*4+e)%250)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	if _, err := k.Client.DiscoveryV1().EndpointSlices(ns).Create(ctx, es, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("endpointslice %s: %w", name, err)
	}
	pt := netv1.PathTypePrefix
	ing := &netv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: netv1.IngressSpec{Rules: []netv1.IngressRule{{
		Host: name + ".test", IngressRuleValue: netv1.IngressRuleValue{HTTP: &netv1.HTTPIngressRuleValue{Paths: []netv1.HTTPIngressPath{{
			Path: "/", PathType: &pt, Backend: netv1.IngressBackend{Service: &netv1.IngressServiceBackend{Name: name, Port: netv1.ServiceBackendPort{Number: 80}}},
		}}}}}}}}
	if _, err := k.Client.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("ingress %s: %w", name, err)
	}
	return nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// cpuTime is the user+system CPU time of process pid (/proc/pid/stat,
// clock ticks of 10 ms).
func cpuTime(tb testing.TB, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// rssKiB is the resident set size of pid in KiB.
func rssKiB(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

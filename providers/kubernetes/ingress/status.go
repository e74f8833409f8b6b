package ingress

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// statusTimeout bounds one status write; statusRetry is the pause before
// writes that failed are tried again.
const (
	statusTimeout = 5 * time.Second
	statusRetry   = 2 * time.Second
)

// desiredStatus is what ingressEndpoint asks to write into
// status.loadBalancer.ingress of every Ingress served; ok is false when
// nothing is to be written now (no ingressEndpoint, or a published
// LoadBalancer Service without an address yet). A problem explains a
// publishedService that cannot be used.
func desiredStatus(ep *static.KubernetesIngressEndpoint, services Lister[*corev1.Service]) (lbs []netv1.IngressLoadBalancerIngress, ok bool, prob *providers.Problem) {
	if ep == nil {
		return nil, false, nil
	}
	if ep.PublishedService == "" {
		return []netv1.IngressLoadBalancerIngress{{IP: ep.IP, Hostname: ep.Hostname}}, true, nil
	}
	ns, name, _ := strings.Cut(ep.PublishedService, "/")
	fail := func(msg string) *providers.Problem {
		return &providers.Problem{Provider: ProviderName, Source: "providers.kubernetesIngress.ingressEndpoint.publishedService " + ep.PublishedService,
			Message: msg + "; Ingress status is not written", Severity: providers.SeverityWarning}
	}
	svc, found := services.Get(ns, name)
	if !found {
		return nil, false, fail(fmt.Sprintf("service %s/%s not found (in the namespaces watched)", ns, name))
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return nil, false, nil // no address assigned yet
		}
		for _, in := range svc.Status.LoadBalancer.Ingress {
			l := netv1.IngressLoadBalancerIngress{IP: in.IP, Hostname: in.Hostname}
			for _, p := range in.Ports {
				l.Ports = append(l.Ports, netv1.IngressPortStatus{Port: p.Port, Protocol: p.Protocol, Error: p.Error})
			}
			lbs = append(lbs, l)
		}
	case corev1.ServiceTypeClusterIP, "":
		var ports []netv1.IngressPortStatus
		for _, p := range svc.Spec.Ports {
			ports = append(ports, netv1.IngressPortStatus{Port: p.Port, Protocol: p.Protocol})
		}
		for _, ip := range svc.Spec.ExternalIPs {
			lbs = append(lbs, netv1.IngressLoadBalancerIngress{IP: ip, Ports: ports})
		}
	case corev1.ServiceTypeExternalName:
		lbs = []netv1.IngressLoadBalancerIngress{{Hostname: svc.Spec.ExternalName}}
	default:
		return nil, false, fail(fmt.Sprintf("service %s/%s is of type %s; Gantry copies the status of LoadBalancer, ClusterIP (externalIPs) and ExternalName Services", ns, name, svc.Spec.Type))
	}
	return lbs, true, nil
}

// statusWriter writes status.loadBalancer of Ingresses in the background,
// so that a slow API server or thousands of Ingresses never delay
// routing. It keeps the latest wish per Ingress and retries failures.
type statusWriter struct {
	client    *k8s.Client
	ingresses Lister[*netv1.Ingress]
	log       *slog.Logger

	mu   sync.Mutex
	want map[string][]netv1.IngressLoadBalancerIngress // "ns/name" -> status
	kick chan struct{}
}

func newStatusWriter(client *k8s.Client, ingresses Lister[*netv1.Ingress], log *slog.Logger) *statusWriter {
	return &statusWriter{client: client, ingresses: ingresses, log: log, kick: make(chan struct{}, 1)}
}

// set replaces the wished statuses: lbs for each of ings.
func (s *statusWriter) set(ings []*netv1.Ingress, lbs []netv1.IngressLoadBalancerIngress) {
	want := make(map[string][]netv1.IngressLoadBalancerIngress, len(ings))
	for _, ing := range ings {
		if !lbEqual(ing.Status.LoadBalancer.Ingress, lbs) {
			want[ing.Namespace+"/"+ing.Name] = lbs
		}
	}
	s.mu.Lock()
	s.want = want
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run writes until ctx is done.
func (s *statusWriter) run(ctx context.Context) {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-retry:
		}
		retry = nil
		s.mu.Lock()
		todo := s.want
		s.mu.Unlock()
		failed := false
		for key, lbs := range todo {
			if ctx.Err() != nil {
				return
			}
			if err := s.write(ctx, key, lbs); err != nil {
				failed = true
				s.log.Warn("cannot write Ingress status", "ingress", key, "error", err)
				continue
			}
			s.mu.Lock()
			if cur, ok := s.want[key]; ok && lbEqual(cur, lbs) {
				delete(s.want, key)
			}
			s.mu.Unlock()
		}
		if failed {
			retry = time.After(statusRetry)
		}
	}
}

// write updates the status of Ingress key unless the cache shows it
// already holds lbs.
func (s *statusWriter) write(ctx context.Context, key string, lbs []netv1.IngressLoadBalancerIngress) error {
	ns, name, _ := strings.Cut(key, "/")
	ing, ok := s.ingresses.Get(ns, name)
	if !ok || lbEqual(ing.Status.LoadBalancer.Ingress, lbs) {
		return nil
	}
	c := ing.DeepCopy()
	c.Status.LoadBalancer.Ingress = lbs
	wctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	_, err := k8s.Ingresses.Client(s.client, ns).UpdateStatus(wctx, c, metav1.UpdateOptions{})
	return err
}

// lbEqual compares two load-balancer statuses (nil equals empty).
func lbEqual(a, b []netv1.IngressLoadBalancerIngress) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

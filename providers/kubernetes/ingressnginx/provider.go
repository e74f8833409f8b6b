package ingressnginx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// Provider is providers.kubernetesIngressNGINX: it watches Ingresses,
// IngressClasses, Services, EndpointSlices, Secrets and ConfigMaps and
// publishes Translate's configuration after every change. Its objects are
// "x@kubernetesingressnginx".
type Provider struct {
	c      static.KubernetesIngressNGINX
	o      Options
	log    *slog.Logger
	report atomic.Pointer[Report]
}

// New checks the options; it does not contact the API server. Errors
// name the option. The provider logs to log with provider=ProviderName.
func New(c static.KubernetesIngressNGINX, log *slog.Logger) (*Provider, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("provider", ProviderName)
	if c.AllowSnippetAnnotations {
		return nil, errors.New("allowSnippetAnnotations: Gantry never runs raw nginx configuration; snippet annotations are refused (remove the option)")
	}
	if c.ThrottleDuration < 0 {
		return nil, fmt.Errorf("throttleDuration: %v is negative", time.Duration(c.ThrottleDuration))
	}
	for i, h := range c.GlobalAllowedResponseHeaders {
		if !headerName.MatchString(h) {
			return nil, fmt.Errorf("globalAllowedResponseHeaders[%d]: %q is not a header name", i, h)
		}
	}
	if _, err := k8s.RESTConfig(clientOptions(c)); err != nil {
		return nil, err
	}
	return &Provider{c: c, log: log, o: Options{
		Provider:                     ProviderName,
		IngressClass:                 c.IngressClass,
		ControllerClass:              c.ControllerClass,
		IngressClassByName:           c.IngressClassByName,
		WatchIngressWithoutClass:     c.WatchIngressWithoutClass,
		HTTPEntryPoint:               c.HTTPEntryPoint,
		HTTPSEntryPoint:              c.HTTPSEntryPoint,
		AllowCrossNamespaceResources: c.AllowCrossNamespaceResources,
		GlobalAllowedResponseHeaders: c.GlobalAllowedResponseHeaders,
	}}, nil
}

func clientOptions(c static.KubernetesIngressNGINX) k8s.ClientOptions {
	return k8s.ClientOptions{KubernetesAPI: c.KubernetesAPI, UserAgent: "gantry/" + ProviderName}
}

// Name implements providers.Provider.
func (p *Provider) Name() string { return ProviderName }

// Report returns the migration report of the last build (nil before the
// first one).
func (p *Provider) Report() *Report { return p.report.Load() }

// Run implements providers.Provider.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	client, err := k8s.NewClient(clientOptions(p.c))
	if err != nil {
		return err
	}
	w := k8s.NewWatcher(ProviderName, client, time.Duration(p.c.ThrottleDuration), p.log)
	src, err := Watch(w, client, p.c.WatchNamespace)
	if err != nil {
		return err
	}
	return w.Run(ctx, func() providers.Snapshot {
		res := src.Translate(p.o)
		p.report.Store(&res.Report)
		return providers.Snapshot{Config: res.Config, Problems: res.Problems}
	}, publish)
}

// Source reads what Translate needs from informer caches.
type Source struct {
	ingresses  k8s.Lister[*netv1.Ingress]
	classes    k8s.Lister[*netv1.IngressClass]
	secrets    k8s.Lister[*corev1.Secret]
	configMaps k8s.Lister[*corev1.ConfigMap]
	backends   k8s.Backends
}

// Watch registers the informers of namespace ns ("" all) with w and
// returns the Source reading their caches.
func Watch(w *k8s.Watcher, client *k8s.Client, ns string) (*Source, error) {
	var scope k8s.Scope
	if ns != "" {
		scope.Namespaces = []string{ns}
	}
	fs := scope.Informers(client, false, nil)
	cluster := k8s.NewInformers(client, "", nil)
	var ings, svcs, slices, secrets, cms []cache.SharedIndexInformer
	for _, f := range fs {
		ings = append(ings, k8s.Ingresses.Informer(f))
		svcs = append(svcs, k8s.Services.Informer(f))
		slices = append(slices, k8s.EndpointSlices.Informer(f))
		secrets = append(secrets, k8s.Secrets.Informer(f))
		cms = append(cms, k8s.ConfigMaps.Informer(f))
		w.AddFactory(f)
	}
	classes := k8s.IngressClasses.Informer(cluster)
	w.AddFactory(cluster)
	all := append(append(append(append(append([]cache.SharedIndexInformer{}, ings...), svcs...), secrets...), cms...), classes)
	if err := w.Watch(nil, all...); err != nil {
		return nil, err
	}
	if err := w.WatchEndpointSlices(slices...); err != nil {
		return nil, err
	}
	return &Source{
		ingresses:  k8s.NewLister[*netv1.Ingress](ings...),
		classes:    k8s.NewLister[*netv1.IngressClass](classes),
		secrets:    k8s.NewLister[*corev1.Secret](secrets...),
		configMaps: k8s.NewLister[*corev1.ConfigMap](cms...),
		backends: k8s.Backends{
			Services: k8s.NewLister[*corev1.Service](svcs...),
			Slices:   k8s.NewLister[*discoveryv1.EndpointSlice](slices...),
		},
	}, nil
}

// Translate translates the cached objects.
func (s *Source) Translate(o Options) Result {
	return Translate(s.ingresses.List(), s.classes.List(), s, o)
}

// Endpoints implements Cluster with the Services and EndpointSlices.
func (s *Source) Endpoints(ns, name string, port netv1.ServiceBackendPort) (ready, fenced []string, err error) {
	t, err := s.backends.Resolve(ns, name, k8s.PortRef{Name: port.Name, Number: port.Number}, false)
	if err != nil {
		return nil, nil, err
	}
	return t.Addrs, t.Fenced, nil
}

// Secret implements Cluster.
func (s *Source) Secret(ns, name string) (*corev1.Secret, error) {
	sec, ok := s.secrets.Get(ns, name)
	if !ok {
		return nil, fmt.Errorf("secret %s/%s not found", ns, name)
	}
	if err := k8s.CheckSecret(sec); err != nil {
		return nil, err
	}
	return sec, nil
}

// ConfigMap implements Cluster.
func (s *Source) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	cm, ok := s.configMaps.Get(ns, name)
	if !ok {
		return nil, fmt.Errorf("configmap %s/%s not found", ns, name)
	}
	return cm, nil
}

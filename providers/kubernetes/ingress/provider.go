package ingress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// ProviderName is the provider's name, as Traefik's: objects are
// "x@kubernetes".
const ProviderName = "kubernetes"

// Provider is providers.kubernetesIngress. Create it with New.
type Provider struct {
	opts  static.KubernetesIngress
	s     settings
	scope k8s.Scope
	log   *slog.Logger
}

// New checks opts and returns the provider; it does not connect (Run
// does). Errors name the option: a labelSelector that does not parse, an
// ingressEndpoint with nothing to write or a publishedService not of the
// form namespace/name.
// Source: https://doc.traefik.io/traefik/providers/kubernetes-ingress/
func New(opts static.KubernetesIngress, log *slog.Logger) (*Provider, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	scope := k8s.Scope{Namespaces: opts.Namespaces, LabelSelector: opts.LabelSelector}
	if err := scope.Check(); err != nil {
		return nil, err
	}
	if ep := opts.IngressEndpoint; ep != nil {
		if ep.PublishedService == "" && ep.IP == "" && ep.Hostname == "" {
			return nil, errors.New("ingressEndpoint: set ip, hostname or publishedService")
		}
		if ep.PublishedService != "" {
			ns, name, ok := strings.Cut(ep.PublishedService, "/")
			if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
				return nil, fmt.Errorf("ingressEndpoint.publishedService %q: want namespace/name", ep.PublishedService)
			}
		}
	}
	if opts.ThrottleDuration < 0 {
		return nil, fmt.Errorf("throttleDuration %v: must not be negative", time.Duration(opts.ThrottleDuration))
	}
	p := &Provider{opts: opts, scope: scope, log: log.With("provider", ProviderName), s: settings{
		ingressClass:            opts.IngressClass,
		classLookup:             !opts.DisableIngressClassLookup && !opts.DisableClusterScopeResources,
		allowEmpty:              opts.AllowEmptyServices,
		nativeLBByDefault:       opts.NativeLBByDefault,
		strictPrefix:            opts.StrictPrefixMatching,
		crossProviderNamespaces: opts.CrossProviderNamespaces,
	}}
	return p, nil
}

// Name returns "kubernetes".
func (p *Provider) Name() string { return ProviderName }

// notHelm leaves Helm's release Secrets (large, never TLS) out of the
// cache, as Traefik does.
func notHelm(o *metav1.ListOptions) { o.LabelSelector = "owner!=helm" }

// Run watches the cluster and publishes a complete snapshot after every
// change (see k8s.Watcher), writing Ingress status in the background when
// ingressEndpoint is set. It returns nil when ctx is done, or an error
// when the client cannot be made (bad endpoint, token or CA file).
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	client, err := k8s.NewClient(k8s.ClientOptions{KubernetesAPI: p.opts.KubernetesAPI, UserAgent: "gantry kubernetes/ingress"})
	if err != nil {
		return fmt.Errorf("providers.kubernetesIngress: %w", err)
	}
	w := k8s.NewWatcher(ProviderName, client, time.Duration(p.opts.ThrottleDuration), p.log)
	var ingInf, svcInf, sliceInf, secretInf, classInf []cache.SharedIndexInformer
	ingFs := p.scope.Informers(client, true, nil)
	kubeFs := p.scope.Informers(client, false, nil)
	secretFs := p.scope.Informers(client, false, notHelm)
	for i := range ingFs {
		ingInf = append(ingInf, k8s.Ingresses.Informer(ingFs[i]))
		svcInf = append(svcInf, k8s.Services.Informer(kubeFs[i]))
		sliceInf = append(sliceInf, k8s.EndpointSlices.Informer(kubeFs[i]))
		secretInf = append(secretInf, k8s.Secrets.Informer(secretFs[i]))
		w.AddFactory(ingFs[i], kubeFs[i], secretFs[i])
	}
	if p.s.classLookup {
		cf := k8s.NewInformers(client, "", nil)
		classInf = append(classInf, k8s.IngressClasses.Informer(cf))
		w.AddFactory(cf)
	}
	for _, infs := range [][]cache.SharedIndexInformer{ingInf, svcInf, secretInf, classInf} {
		if err := w.Watch(nil, infs...); err != nil {
			return fmt.Errorf("providers.kubernetesIngress: %w", err)
		}
	}
	if err := w.WatchEndpointSlices(sliceInf...); err != nil {
		return fmt.Errorf("providers.kubernetesIngress: %w", err)
	}
	c := cluster{
		ingresses: k8s.NewLister[*netv1.Ingress](ingInf...),
		classes:   k8s.NewLister[*netv1.IngressClass](classInf...),
		secrets:   k8s.NewLister[*corev1.Secret](secretInf...),
		backends: k8s.Backends{Services: k8s.NewLister[*corev1.Service](svcInf...),
			Slices: k8s.NewLister[*discoveryv1.EndpointSlice](sliceInf...), AllowExternalName: p.opts.AllowExternalNameServices},
	}
	if p.opts.AllowExternalNameServices {
		p.log.Info("ExternalName Services are allowed (allowExternalNameServices)")
	}
	var status *statusWriter
	var wg sync.WaitGroup
	sctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); wg.Wait() }()
	if p.opts.IngressEndpoint != nil {
		status = newStatusWriter(client, c.ingresses, p.log)
		wg.Go(func() { status.run(sctx) })
	}
	buildAll := func() providers.Snapshot {
		snap, served := build(p.s, c)
		if status != nil {
			lbs, ok, prob := desiredStatus(p.opts.IngressEndpoint, c.backends.Services)
			if prob != nil {
				snap.Problems = append(snap.Problems, *prob)
			}
			if ok {
				status.set(served, lbs)
			}
		}
		return snap
	}
	return w.Run(ctx, buildAll, publish)
}

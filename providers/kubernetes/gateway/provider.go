package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// Provider is providers.kubernetesGateway: it watches the Gateway API
// objects and the Services, EndpointSlices, Secrets and Namespaces they
// use, publishes Translate's configuration on every change, and writes
// the statuses back (statusWriter).
type Provider struct {
	opts  static.KubernetesGateway
	eps   map[string]EntryPoint
	scope k8s.Scope
	log   *slog.Logger
}

// New checks o and maps the static entrypoints for listeners. Errors name
// the option.
func New(o static.KubernetesGateway, entryPoints map[string]*static.EntryPoint, log *slog.Logger) (*Provider, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provider{opts: o, eps: map[string]EntryPoint{}, log: log.With("provider", ProviderName)}
	p.scope = k8s.Scope{Namespaces: o.Namespaces, LabelSelector: o.LabelSelector}
	if err := p.scope.Check(); err != nil {
		return nil, err
	}
	if o.ThrottleDuration < 0 {
		return nil, fmt.Errorf("throttleDuration: %s is negative", time.Duration(o.ThrottleDuration))
	}
	if sa := o.StatusAddress; sa != nil {
		switch {
		case sa.IP != "":
			if net.ParseIP(sa.IP) == nil {
				return nil, fmt.Errorf("statusAddress.ip: %q is not an IP address", sa.IP)
			}
		case sa.Hostname != "":
		case sa.Service != nil && sa.Service.Name != "" && sa.Service.Namespace != "":
		default:
			return nil, errors.New("statusAddress: set ip, hostname, or service.name and service.namespace")
		}
	}
	for name, ep := range entryPoints {
		if ep == nil {
			continue
		}
		addr, udp := strings.CutSuffix(ep.Address, "/udp")
		addr = strings.TrimSuffix(addr, "/tcp")
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue // reported by the static configuration's own checks
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			continue
		}
		p.eps[name] = EntryPoint{Port: n, UDP: udp, HTTPTLS: ep.HTTP != nil && ep.HTTP.TLS != nil}
	}
	return p, nil
}

// Name implements providers.Provider.
func (p *Provider) Name() string { return ProviderName }

// caches are the listers build reads.
type caches struct {
	classes, gateways, httpRoutes, grpcRoutes, tlsRoutes, tcpRoutes, udpRoutes, grants k8s.Lister[any]
	namespaces                                                                         k8s.Lister[*corev1.Namespace]
	services                                                                           k8s.Lister[*corev1.Service]
	slices                                                                             k8s.Lister[*discoveryv1.EndpointSlice]
	secrets                                                                            k8s.Lister[*corev1.Secret]
}

// Run implements providers.Provider: it connects (p.clients), checks which
// Gateway API kinds the API server serves, starts the informers of the
// objects the translation reads (p.watchCore, p.watchGatewayAPI) and the
// status writer, then publishes a translation on every change until ctx
// ends. Errors: the client, discovery or an informer could not start.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	client, gwc, err := p.clients()
	if err != nil {
		return err
	}
	served, err := p.servedKinds(ctx, client)
	if err != nil {
		return err
	}
	w := k8s.NewWatcher(ProviderName, client, time.Duration(p.opts.ThrottleDuration), p.log)
	var c caches
	if err := p.watchCore(w, client, &c); err != nil {
		return err
	}
	if err := p.watchGatewayAPI(w, gwc, served, &c); err != nil {
		return err
	}

	sw := newStatusWriter(gwc, &c, p.opts, p.log, w.Trigger)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sw.run(ctx)
	}()
	defer func() { cancel(); <-done }()

	be := backends{b: k8s.Backends{Services: c.services, Slices: c.slices}, secrets: c.secrets, nativeLB: p.opts.NativeLBByDefault}
	build := func() providers.Snapshot {
		in := c.input()
		opts := Options{EntryPoints: p.eps, ExperimentalChannel: p.opts.ExperimentalChannel, Addresses: p.addresses(c.services)}
		res := Translate(in, be, opts)
		sw.submit(res.Status)
		return providers.Snapshot{Config: res.Config, Problems: res.Problems}
	}
	return w.Run(ctx, build, publish)
}

// clients builds the Kubernetes client from the provider's endpoint, token
// and CA options, and the Gateway API client on a copy of its config with
// the provider's qps and burst (default 50 and 100).
func (p *Provider) clients() (*k8s.Client, *k8s.Client, error) {
	client, err := k8s.NewClient(k8s.ClientOptions{KubernetesAPI: p.opts.KubernetesAPI, UserAgent: "gantry/" + ProviderName})
	if err != nil {
		return nil, nil, err
	}
	qps, burst := float32(50), 100
	if p.opts.QPS != 0 {
		qps = float32(p.opts.QPS)
	}
	if p.opts.Burst > 0 {
		burst = p.opts.Burst
	}
	gwc, err := client.WithRate(qps, burst)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway API client: %w", err)
	}
	return client, gwc, nil
}

// watchCore adds to w the informers of the core objects the translation
// reads, and fills c's listers for them: Services, EndpointSlices and
// Secrets in the provider's scope, Namespaces cluster-wide (allowedRoutes
// selectors).
func (p *Provider) watchCore(w *k8s.Watcher, client *k8s.Client, c *caches) error {
	var svcs, slis, secs []cache.SharedIndexInformer
	for _, f := range p.scope.Informers(client, false, nil) {
		svcs = append(svcs, k8s.Services.Informer(f))
		slis = append(slis, k8s.EndpointSlices.Informer(f))
		secs = append(secs, k8s.Secrets.Informer(f))
		w.AddFactory(f)
	}
	nsf := k8s.NewInformers(client, "", nil)
	nsInf := k8s.Namespaces.Informer(nsf)
	w.AddFactory(nsf)
	if err := w.Watch(nil, append(append(svcs, secs...), nsInf)...); err != nil {
		return err
	}
	if err := w.WatchEndpointSlices(slis...); err != nil {
		return err
	}
	c.services, c.slices, c.secrets = k8s.NewLister[*corev1.Service](svcs...), k8s.NewLister[*discoveryv1.EndpointSlice](slis...), k8s.NewLister[*corev1.Secret](secs...)
	c.namespaces = k8s.NewLister[*corev1.Namespace](nsInf)
	return nil
}

// watchGatewayAPI adds to w the Gateway API informers and fills c's
// listers for them: GatewayClasses cluster-wide (labelSelector), then per
// namespace of the scope each namespaced kind the API server serves
// (served, from servedKinds); TCPRoutes and UDPRoutes only with the
// experimental channel.
func (p *Provider) watchGatewayAPI(w *k8s.Watcher, gwc *k8s.Client, served map[string]bool, c *caches) error {
	cf := k8s.NewInformers(gwc, "", func(o *metav1.ListOptions) { o.LabelSelector = p.opts.LabelSelector })
	classInf := k8s.GatewayClasses.Informer(cf)
	w.AddFactory(cf)
	if err := w.Watch(nil, classInf); err != nil {
		return err
	}
	c.classes = k8s.NewLister[any](classInf)
	kinds := map[string][]cache.SharedIndexInformer{}
	for _, ns := range p.scope.InformerNamespaces() {
		f := k8s.NewInformers(gwc, ns, nil)
		add := func(resource string, inf func(*k8s.Informers) cache.SharedIndexInformer) {
			if served[resource] {
				kinds[resource] = append(kinds[resource], inf(f))
			}
		}
		add("gateways", k8s.Gateways.Informer)
		add("httproutes", k8s.HTTPRoutes.Informer)
		add("grpcroutes", k8s.GRPCRoutes.Informer)
		add("tlsroutes", k8s.TLSRoutes.Informer)
		add("referencegrants", k8s.ReferenceGrants.Informer)
		if p.opts.ExperimentalChannel {
			add("tcproutes", k8s.TCPRoutes.Informer)
			add("udproutes", k8s.UDPRoutes.Informer)
		}
		w.AddFactory(f)
	}
	for _, infs := range kinds {
		if err := w.Watch(nil, infs...); err != nil {
			return err
		}
	}
	c.gateways, c.httpRoutes, c.grpcRoutes = k8s.NewLister[any](kinds["gateways"]...), k8s.NewLister[any](kinds["httproutes"]...), k8s.NewLister[any](kinds["grpcroutes"]...)
	c.tlsRoutes, c.tcpRoutes, c.udpRoutes = k8s.NewLister[any](kinds["tlsroutes"]...), k8s.NewLister[any](kinds["tcproutes"]...), k8s.NewLister[any](kinds["udproutes"]...)
	c.grants = k8s.NewLister[any](kinds["referencegrants"]...)
	return nil
}

// servedKinds asks the API server which Gateway API v1 resources it
// serves: informers for a missing CRD would never sync. Gateways and
// GatewayClasses are required.
func (p *Provider) servedKinds(ctx context.Context, client *k8s.Client) (map[string]bool, error) {
	rl, err := client.ServerResources(ctx, gwv1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("discovering %s (are the Gateway API CRDs installed?): %w", gwv1.GroupVersion, err)
	}
	out := map[string]bool{}
	for _, r := range rl.APIResources {
		out[r.Name] = true
	}
	if !out["gateways"] || !out["gatewayclasses"] {
		return nil, fmt.Errorf("the API server does not serve %s gateways and gatewayclasses: install the Gateway API CRDs", gwv1.GroupVersion)
	}
	for _, r := range []string{"httproutes", "grpcroutes", "tlsroutes", "referencegrants"} {
		if !out[r] {
			p.log.Warn("Gateway API resource not served; its objects are ignored", "resource", r)
		}
	}
	return out, nil
}

// addresses resolves statusAddress for Gateways' status.addresses.
func (p *Provider) addresses(services k8s.Lister[*corev1.Service]) []gwv1.GatewayStatusAddress {
	sa := p.opts.StatusAddress
	switch {
	case sa == nil:
		return nil
	case sa.IP != "":
		return []gwv1.GatewayStatusAddress{{Type: new(gwv1.IPAddressType), Value: sa.IP}}
	case sa.Hostname != "":
		return []gwv1.GatewayStatusAddress{{Type: new(gwv1.HostnameAddressType), Value: sa.Hostname}}
	}
	svc, ok := services.Get(sa.Service.Namespace, sa.Service.Name)
	if !ok {
		return nil
	}
	var out []gwv1.GatewayStatusAddress
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			out = append(out, gwv1.GatewayStatusAddress{Type: new(gwv1.IPAddressType), Value: in.IP})
		case in.Hostname != "":
			out = append(out, gwv1.GatewayStatusAddress{Type: new(gwv1.HostnameAddressType), Value: in.Hostname})
		}
	}
	return out
}

// input lists the caches into an Input.
func (c *caches) input() *Input {
	return &Input{
		Namespaces:      c.namespaces.List(),
		GatewayClasses:  listOf[*gwv1.GatewayClass](c.classes),
		Gateways:        listOf[*gwv1.Gateway](c.gateways),
		HTTPRoutes:      listOf[*gwv1.HTTPRoute](c.httpRoutes),
		GRPCRoutes:      listOf[*gwv1.GRPCRoute](c.grpcRoutes),
		TLSRoutes:       listOf[*gwv1.TLSRoute](c.tlsRoutes),
		TCPRoutes:       listOf[*gwv1.TCPRoute](c.tcpRoutes),
		UDPRoutes:       listOf[*gwv1.UDPRoute](c.udpRoutes),
		ReferenceGrants: listOf[*gwv1.ReferenceGrant](c.grants),
	}
}

// listOf returns the objects of l's caches that are a T (each cache holds
// one kind; the status writer reads the same caches untyped).
func listOf[T any](l k8s.Lister[any]) []T {
	var out []T
	for _, o := range l.List() {
		if x, ok := o.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// backends adapts k8s.Backends and the Secret cache to Backends.
type backends struct {
	b        k8s.Backends
	secrets  k8s.Lister[*corev1.Secret]
	nativeLB bool
}

func (a backends) Service(ns, name string, port int32) (Backend, error) {
	if _, ok := a.b.Services.Get(ns, name); !ok {
		return Backend{}, fmt.Errorf("Service %s/%s: %w", ns, name, ErrNotFound)
	}
	t, err := a.b.Resolve(ns, name, k8s.PortRef{Number: port}, a.nativeLB)
	if err != nil {
		return Backend{}, err
	}
	b := Backend{Addresses: t.Addrs, PortName: t.Port.Name, Protocol: t.Port.Protocol}
	if t.Port.AppProtocol != nil {
		b.AppProtocol = *t.Port.AppProtocol
	}
	return b, nil
}

func (a backends) Certificate(ns, name string) (string, string, error) {
	if _, ok := a.secrets.Get(ns, name); !ok {
		return "", "", fmt.Errorf("Secret %s/%s: %w", ns, name, ErrNotFound)
	}
	c, err := k8s.TLSSecret(a.secrets, ns, name)
	if err != nil {
		return "", "", err
	}
	return c.CertFile, c.KeyFile, nil
}

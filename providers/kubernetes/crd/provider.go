package crd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// crdRetry is how often Run looks again for CustomResourceDefinitions
// that are not installed yet.
const crdRetry = 5 * time.Second

// Provider is the kubernetesCRD provider (see the package doc).
type Provider struct {
	opts     Options
	client   *k8s.Client
	scope    k8s.Scope
	throttle time.Duration
	log      *slog.Logger
}

// New checks c (the label selector, the client configuration: endpoint,
// token, certAuthFilePath, or the pod's service account, or $KUBECONFIG)
// and returns the provider; it does not contact the API server.
func New(c static.KubernetesCRD, log *slog.Logger) (*Provider, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Provider{
		opts: Options{
			AllowCrossNamespace:       c.AllowCrossNamespace,
			AllowExternalNameServices: c.AllowExternalNameServices,
			AllowEmptyServices:        c.AllowEmptyServices,
			NativeLBByDefault:         c.NativeLBByDefault,
			IngressClass:              c.IngressClass,
			CrossProviderNamespaces:   c.CrossProviderNamespaces,
		},
		scope:    k8s.Scope{Namespaces: c.Namespaces, LabelSelector: c.LabelSelector},
		throttle: c.ThrottleDuration.D(),
		log:      log,
	}
	if err := p.scope.Check(); err != nil {
		return nil, err
	}
	if p.throttle < 0 {
		return nil, fmt.Errorf("throttleDuration %v: negative", c.ThrottleDuration)
	}
	client, err := k8s.NewClient(k8s.ClientOptions{KubernetesAPI: c.KubernetesAPI, UserAgent: "gantry/" + ProviderName})
	if err != nil {
		return nil, err
	}
	p.client = client
	return p, nil
}

// Name is "kubernetescrd".
func (p *Provider) Name() string { return ProviderName }

// GVR is the resource of kind k.
func (k Kind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: Version, Resource: k.Plural}
}

// Run waits for the CustomResourceDefinitions (a KeepConfig snapshot with
// a Problem naming the missing ones meanwhile), then watches the ten kinds
// (with labelSelector) and the Services, EndpointSlices and Secrets of the
// watched namespaces (ConfigMaps once a transport names one), and publishes Translate's snapshot
// after every change, at most once per throttleDuration.
func (p *Provider) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	client := p.client
	if err := p.waitForCRDs(ctx, client, publish); err != nil || ctx.Err() != nil {
		return err
	}
	w := k8s.NewWatcher(ProviderName, client, p.throttle, p.log)

	core := p.scope.Informers(client, false, nil)
	var svcs, eps, secrets []cache.SharedIndexInformer
	for _, f := range core {
		svcs = append(svcs, k8s.Services.Informer(f))
		eps = append(eps, k8s.EndpointSlices.Informer(f))
		secrets = append(secrets, k8s.Secrets.Informer(f))
	}
	for _, infs := range [][]cache.SharedIndexInformer{svcs, secrets} {
		if err := w.Watch(nil, infs...); err != nil {
			return err
		}
	}
	if err := w.WatchEndpointSlices(eps...); err != nil {
		return err
	}
	for _, f := range core {
		w.AddFactory(f)
	}

	dc, err := dynamic.NewForConfig(client.Config)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	crs := map[string][]cache.SharedIndexInformer{}
	for _, ns := range p.scope.InformerNamespaces() {
		f := k8s.NewInformers(client, ns, func(o *metav1.ListOptions) {
			o.LabelSelector = p.scope.LabelSelector
		})
		for _, k := range Kinds {
			crs[k.Kind] = append(crs[k.Kind], f.Dynamic(dc, k.GVR()))
		}
		w.AddFactory(f)
	}
	for _, infs := range crs {
		if err := w.Watch(nil, infs...); err != nil {
			return err
		}
	}

	cl := &cluster{
		backends: k8s.Backends{
			Services:          k8s.NewLister[*corev1.Service](svcs...),
			Slices:            k8s.NewLister[*discoveryv1.EndpointSlice](eps...),
			AllowExternalName: p.opts.AllowExternalNameServices,
		},
		secrets: k8s.NewLister[*corev1.Secret](secrets...),
	}
	cms := &configMaps{scope: p.scope, client: client, w: w}
	cctx, cancel := context.WithCancel(ctx)
	defer cms.stop() // after cancel: Shutdown waits for the stopped informers
	defer cancel()
	build := func() providers.Snapshot {
		objs := map[string][]*unstructured.Unstructured{}
		for kind, infs := range crs {
			for _, o := range k8s.NewLister[*unstructured.Unstructured](infs...).List() {
				objs[kind] = append(objs[kind], o)
			}
		}
		in, probs := Decode(objs)
		if usesConfigMaps(in) {
			cl.cms = cms.start(cctx)
		}
		snap := Translate(in, cl, p.opts)
		snap.Problems = append(probs, snap.Problems...)
		return snap
	}
	return w.Run(ctx, build, publish)
}

// configMaps watches ConfigMaps only once a ServersTransport(TCP) takes a
// CA from one, so that the provider needs no right on ConfigMaps until
// then (Traefik's RBAC grants list and watch on them; Gantry's example
// does not). Until their cache has synced, a referenced ConfigMap reads
// as missing (a problem); the sync triggers a build.
type configMaps struct {
	scope     k8s.Scope
	client    *k8s.Client
	w         *k8s.Watcher
	factories []*k8s.Informers
	lister    *k8s.Lister[*corev1.ConfigMap]
}

// start starts the informers once and returns their lister.
func (c *configMaps) start(ctx context.Context) *k8s.Lister[*corev1.ConfigMap] {
	if c.lister != nil {
		return c.lister
	}
	c.factories = c.scope.Informers(c.client, false, nil)
	var infs []cache.SharedIndexInformer
	for _, f := range c.factories {
		infs = append(infs, k8s.ConfigMaps.Informer(f))
	}
	for _, inf := range infs {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.w.Trigger() },
			UpdateFunc: func(any, any) { c.w.Trigger() },
			DeleteFunc: func(any) { c.w.Trigger() },
		})
	}
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	l := k8s.NewLister[*corev1.ConfigMap](infs...)
	c.lister = &l
	return c.lister
}

// stop shuts the informers down (waiting for their goroutines).
func (c *configMaps) stop() {
	for _, f := range c.factories {
		f.Shutdown()
	}
}

// usesConfigMaps reports whether a transport of in takes a CA from a
// ConfigMap.
func usesConfigMaps(in *Input) bool {
	has := func(refs []RootCA) bool {
		for _, r := range refs {
			if r.ConfigMap != nil {
				return true
			}
		}
		return false
	}
	for _, st := range in.ServersTransports {
		if has(st.Spec.RootCAs) {
			return true
		}
	}
	for _, st := range in.ServersTransportTCPs {
		if st.Spec.TLS != nil && has(st.Spec.TLS.RootCAs) {
			return true
		}
	}
	return false
}

// waitForCRDs returns once the API server serves every kind of Kinds,
// publishing meanwhile a KeepConfig snapshot (the stored configuration
// keeps serving) with a Problem naming what is missing; it returns nil
// when ctx ends first.
func (p *Provider) waitForCRDs(ctx context.Context, client *k8s.Client, publish func(providers.Snapshot)) error {
	last := ""
	for {
		missing, err := missingKinds(ctx, client)
		if err == nil && len(missing) == 0 {
			return nil
		}
		msg := ""
		if err != nil {
			msg = fmt.Sprintf("cannot list the %s/%s resources: %v", Group, Version, err)
		} else {
			msg = fmt.Sprintf("the CustomResourceDefinitions of %s are not installed (apply examples/kubernetes/crds); waiting for them", strings.Join(missing, ", "))
		}
		if msg != last {
			p.log.Warn("kubernetesCRD not ready", "problem", msg)
			last = msg
		}
		ps := append(client.Health.Problems(ProviderName), providers.Problem{
			Provider: ProviderName, Source: "API " + Group + "/" + Version, Severity: providers.SeverityError, Message: msg,
		})
		publish(providers.Snapshot{KeepConfig: true, Problems: ps})
		if !providers.Sleep(ctx, crdRetry) {
			return nil
		}
	}
}

// missingKinds lists the kinds of Kinds the API server does not serve.
func missingKinds(ctx context.Context, client *k8s.Client) ([]string, error) {
	served := map[string]bool{}
	list, err := client.ServerResources(ctx, schema.GroupVersion{Group: Group, Version: Version})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if list != nil {
		for _, r := range list.APIResources {
			served[r.Name] = true
		}
	}
	var missing []string
	for _, k := range Kinds {
		if !served[k.Plural] {
			missing = append(missing, k.Kind)
		}
	}
	return missing, nil
}

// cluster is the Cluster the provider's informers back.
type cluster struct {
	backends k8s.Backends
	secrets  k8s.Lister[*corev1.Secret]
	cms      *k8s.Lister[*corev1.ConfigMap] // nil until a transport needs one
}

func (c *cluster) Resolve(ns, name string, port k8s.PortRef, nativeLB bool) (k8s.Target, error) {
	return c.backends.Resolve(ns, name, port, nativeLB)
}

func (c *cluster) Secrets() k8s.Lister[*corev1.Secret] { return c.secrets }

func (c *cluster) ConfigMap(ns, name string) (*corev1.ConfigMap, bool) {
	if c.cms == nil {
		return nil, false
	}
	return c.cms.Get(ns, name)
}

package gateway

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

// statusRetry is how long the writer waits before trying again after a
// failed write (a conflict, the API server away).
const statusRetry = time.Second

// statusWriter writes the statuses Translate computed, only those that
// differ from the cached objects (so that its own writes, which come
// back as informer updates, settle at once). The latest submitted status
// wins; a failed write asks for a rebuild after statusRetry.
type statusWriter struct {
	client  *k8s.Client
	c       *caches
	log     *slog.Logger
	trigger func()
	ctrl    string
	pending chan Status
}

func newStatusWriter(client *k8s.Client, c *caches, _ static.KubernetesGateway, log *slog.Logger, trigger func()) *statusWriter {
	return &statusWriter{client: client, c: c, log: log, trigger: trigger, ctrl: DefaultControllerName, pending: make(chan Status, 1)}
}

// submit replaces the pending status; it never blocks.
func (s *statusWriter) submit(st Status) {
	for {
		select {
		case s.pending <- st:
			return
		default:
		}
		select {
		case <-s.pending:
		default:
		}
	}
}

// run writes submitted statuses until ctx is done.
func (s *statusWriter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case st := <-s.pending:
			if failed := s.write(ctx, st); failed > 0 {
				if !providers.Sleep(ctx, statusRetry) {
					return
				}
				s.trigger()
			}
		}
	}
}

// write writes every status of st that differs, returning how many
// writes failed.
func (s *statusWriter) write(ctx context.Context, st Status) (failed int) {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	fail := func(kind, ns, name string, err error) {
		failed++
		if ctx.Err() == nil {
			s.log.Warn("status not written; retrying", "kind", kind, "namespace", ns, "name", name, "error", err)
		}
	}
	kc := s.client
	for name, want := range st.GatewayClasses {
		o, ok := s.c.classes.Get("", name)
		gc, _ := o.(*gwv1.GatewayClass)
		if !ok || gc == nil {
			continue
		}
		merge := func(have gwv1.GatewayClassStatus) (gwv1.GatewayClassStatus, bool) {
			return mergeGatewayClass(have, want, now)
		}
		if err := writeStatus(ctx, gc, func(c *gwv1.GatewayClass) *gwv1.GatewayClassStatus { return &c.Status }, merge, k8s.GatewayClasses.Client(kc, "").UpdateStatus); err != nil {
			fail("GatewayClass", "", name, err)
		}
	}
	for nn, want := range st.Gateways {
		o, ok := s.c.gateways.Get(nn.Namespace, nn.Name)
		g, _ := o.(*gwv1.Gateway)
		if !ok || g == nil {
			continue
		}
		merge := func(have gwv1.GatewayStatus) (gwv1.GatewayStatus, bool) { return mergeGateway(have, want, now) }
		if err := writeStatus(ctx, g, func(g *gwv1.Gateway) *gwv1.GatewayStatus { return &g.Status }, merge, k8s.Gateways.Client(kc, nn.Namespace).UpdateStatus); err != nil {
			fail("Gateway", nn.Namespace, nn.Name, err)
		}
	}
	// Every cached route: those no longer attached to our Gateways lose
	// our parent entries.
	routes := func(kind string, list []any) {
		for _, o := range list {
			if err := s.writeRoute(ctx, kind, o, st, now); err != nil {
				m, _ := metaOf(o)
				fail(kind, m.Namespace, m.Name, err)
			}
		}
	}
	routes("HTTPRoute", s.c.httpRoutes.List())
	routes("GRPCRoute", s.c.grpcRoutes.List())
	routes("TLSRoute", s.c.tlsRoutes.List())
	routes("TCPRoute", s.c.tcpRoutes.List())
	routes("UDPRoute", s.c.udpRoutes.List())
	return failed
}

func metaOf(o any) (metav1.ObjectMeta, bool) {
	switch x := o.(type) {
	case *gwv1.HTTPRoute:
		return x.ObjectMeta, true
	case *gwv1.GRPCRoute:
		return x.ObjectMeta, true
	case *gwv1.TLSRoute:
		return x.ObjectMeta, true
	case *gwv1.TCPRoute:
		return x.ObjectMeta, true
	case *gwv1.UDPRoute:
		return x.ObjectMeta, true
	}
	return metav1.ObjectMeta{}, false
}

// writeRoute writes one route's status.parents when they differ from
// what st wants for it (our entries merged into the other controllers').
func (s *statusWriter) writeRoute(ctx context.Context, kind string, o any, st Status, now metav1.Time) error {
	m, ok := metaOf(o)
	if !ok {
		return nil
	}
	want := st.Routes[RouteKey{Kind: kind, NamespacedName: nsName(m)}]
	merge := func(have []gwv1.RouteParentStatus) ([]gwv1.RouteParentStatus, bool) {
		return mergeRouteParents(have, want, s.ctrl, now)
	}
	kc := s.client
	switch x := o.(type) {
	case *gwv1.HTTPRoute:
		return writeStatus(ctx, x, func(r *gwv1.HTTPRoute) *[]gwv1.RouteParentStatus { return &r.Status.Parents }, merge, k8s.HTTPRoutes.Client(kc, m.Namespace).UpdateStatus)
	case *gwv1.GRPCRoute:
		return writeStatus(ctx, x, func(r *gwv1.GRPCRoute) *[]gwv1.RouteParentStatus { return &r.Status.Parents }, merge, k8s.GRPCRoutes.Client(kc, m.Namespace).UpdateStatus)
	case *gwv1.TLSRoute:
		return writeStatus(ctx, x, func(r *gwv1.TLSRoute) *[]gwv1.RouteParentStatus { return &r.Status.Parents }, merge, k8s.TLSRoutes.Client(kc, m.Namespace).UpdateStatus)
	case *gwv1.TCPRoute:
		return writeStatus(ctx, x, func(r *gwv1.TCPRoute) *[]gwv1.RouteParentStatus { return &r.Status.Parents }, merge, k8s.TCPRoutes.Client(kc, m.Namespace).UpdateStatus)
	case *gwv1.UDPRoute:
		return writeStatus(ctx, x, func(r *gwv1.UDPRoute) *[]gwv1.RouteParentStatus { return &r.Status.Parents }, merge, k8s.UDPRoutes.Client(kc, m.Namespace).UpdateStatus)
	}
	return nil
}

// writeStatus writes one object's status (or the part of it status
// locates) when merge, given the cached value, reports a change; update is
// the kind's typed UpdateStatus. The cached object x is never modified:
// the merged value goes on a deep copy.
func writeStatus[R any, P interface {
	*R
	DeepCopy() *R
}, S any](ctx context.Context, x P, status func(*R) *S, merge func(S) (S, bool), update func(context.Context, *R, metav1.UpdateOptions) (*R, error)) error {
	merged, changed := merge(*status(x))
	if !changed {
		return nil
	}
	cp := x.DeepCopy()
	*status(cp) = merged
	_, err := update(ctx, cp, metav1.UpdateOptions{})
	return err
}

func nsName(m metav1.ObjectMeta) types.NamespacedName {
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
}

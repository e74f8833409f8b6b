package gateway

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/gantry-proxy/gantry/config/static"
)

// statusRetry is how long the writer waits before trying again after a
// failed write (a conflict, the API server away).
const statusRetry = time.Second

// statusWriter writes the statuses Translate computed, only those that
// differ from the cached objects (so that its own writes, which come
// back as informer updates, settle at once). The latest submitted status
// wins; a failed write asks for a rebuild after statusRetry.
type statusWriter struct {
	cs      gwclient.Interface
	c       *caches
	log     *slog.Logger
	trigger func()
	ctrl    string
	pending chan Status
}

func newStatusWriter(cs gwclient.Interface, c *caches, _ static.KubernetesGateway, log *slog.Logger, trigger func()) *statusWriter {
	return &statusWriter{cs: cs, c: c, log: log, trigger: trigger, ctrl: DefaultControllerName, pending: make(chan Status, 1)}
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
				t := time.NewTimer(statusRetry)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
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
	for name, want := range st.GatewayClasses {
		o, ok := s.c.classes.Get("", name)
		gc, _ := o.(*gwv1.GatewayClass)
		if !ok || gc == nil {
			continue
		}
		merged, changed := mergeGatewayClass(gc.Status, want, now)
		if !changed {
			continue
		}
		cp := gc.DeepCopy()
		cp.Status = merged
		if _, err := s.cs.GatewayV1().GatewayClasses().UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
			fail("GatewayClass", "", name, err)
		}
	}
	for nn, want := range st.Gateways {
		o, ok := s.c.gateways.Get(nn.Namespace, nn.Name)
		g, _ := o.(*gwv1.Gateway)
		if !ok || g == nil {
			continue
		}
		merged, changed := mergeGateway(g.Status, want, now)
		if !changed {
			continue
		}
		cp := g.DeepCopy()
		cp.Status = merged
		if _, err := s.cs.GatewayV1().Gateways(nn.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
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

// writeRoute writes one route's parents when they differ.
func (s *statusWriter) writeRoute(ctx context.Context, kind string, o any, st Status, now metav1.Time) error {
	m, ok := metaOf(o)
	if !ok {
		return nil
	}
	want := st.Routes[RouteKey{Kind: kind, NamespacedName: nsName(m)}]
	var err error
	switch x := o.(type) {
	case *gwv1.HTTPRoute:
		if parents, changed := mergeRouteParents(x.Status.Parents, want, s.ctrl, now); changed {
			cp := x.DeepCopy()
			cp.Status.Parents = parents
			_, err = s.cs.GatewayV1().HTTPRoutes(m.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		}
	case *gwv1.GRPCRoute:
		if parents, changed := mergeRouteParents(x.Status.Parents, want, s.ctrl, now); changed {
			cp := x.DeepCopy()
			cp.Status.Parents = parents
			_, err = s.cs.GatewayV1().GRPCRoutes(m.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		}
	case *gwv1.TLSRoute:
		if parents, changed := mergeRouteParents(x.Status.Parents, want, s.ctrl, now); changed {
			cp := x.DeepCopy()
			cp.Status.Parents = parents
			_, err = s.cs.GatewayV1().TLSRoutes(m.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		}
	case *gwv1.TCPRoute:
		if parents, changed := mergeRouteParents(x.Status.Parents, want, s.ctrl, now); changed {
			cp := x.DeepCopy()
			cp.Status.Parents = parents
			_, err = s.cs.GatewayV1().TCPRoutes(m.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		}
	case *gwv1.UDPRoute:
		if parents, changed := mergeRouteParents(x.Status.Parents, want, s.ctrl, now); changed {
			cp := x.DeepCopy()
			cp.Status.Parents = parents
			_, err = s.cs.GatewayV1().UDPRoutes(m.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		}
	}
	return err
}

func nsName(m metav1.ObjectMeta) types.NamespacedName {
	return types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
}

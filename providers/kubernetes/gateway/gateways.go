package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// gateway is one of our Gateways with its listeners.
type gateway struct {
	obj       *gwv1.Gateway
	accepted  bool
	listeners []*listener
	cond      []metav1.Condition // Gateway-level conditions decided early
}

// listener is one listener of a gateway and what routes need of it.
type listener struct {
	gw       *gateway
	spec     gwv1.Listener
	ep       string
	kinds    []gwv1.RouteGroupKind
	from     gwv1.FromNamespaces
	selector labels.Selector
	// valid: accepted, no conflict, refs resolved: routes attached to it
	// are served.
	valid    bool
	attached int32
	conds    []metav1.Condition
	// isolate lists the hostnames of more specific listeners sharing the
	// entrypoint, which this listener's routes must not match.
	isolate []string
}

func (l *listener) passthrough() bool {
	return l.spec.TLS != nil && ptrOr(l.spec.TLS.Mode, gwv1.TLSModeTerminate) == gwv1.TLSModePassthrough
}

// supportedKinds lists the route kinds a listener protocol serves.
func (t *translator) supportedKinds(p gwv1.ProtocolType) []gwv1.Kind {
	switch p {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		return []gwv1.Kind{"HTTPRoute", "GRPCRoute"}
	case gwv1.TLSProtocolType:
		if t.opts.ExperimentalChannel {
			return []gwv1.Kind{"TLSRoute", "TCPRoute"}
		}
		return []gwv1.Kind{"TLSRoute"}
	case gwv1.TCPProtocolType:
		if t.opts.ExperimentalChannel {
			return []gwv1.Kind{"TCPRoute"}
		}
	case gwv1.UDPProtocolType:
		if t.opts.ExperimentalChannel {
			return []gwv1.Kind{"UDPRoute"}
		}
	}
	return nil
}

// loadGateways accepts our GatewayClasses and reads their Gateways.
func (t *translator) loadGateways() {
	ours := map[string]bool{}
	for _, gc := range t.in.GatewayClasses {
		if string(gc.Spec.ControllerName) != t.opts.ControllerName {
			continue
		}
		ours[gc.Name] = true
		t.status.GatewayClasses[gc.Name] = GatewayClassStatus{
			Conditions: []metav1.Condition{
				cond(string(gwv1.GatewayClassConditionStatusAccepted), true, string(gwv1.GatewayClassReasonAccepted), "Handled by "+t.opts.ControllerName, gc.Generation),
				cond(string(gwv1.GatewayClassConditionStatusSupportedVersion), true, string(gwv1.GatewayClassReasonSupportedVersion), "Gateway API v1.6", gc.Generation),
			},
			SupportedFeatures: SupportedFeatures(t.opts.ExperimentalChannel),
		}
	}
	gws := slices.Clone(t.in.Gateways)
	slices.SortFunc(gws, func(a, b *gwv1.Gateway) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	for _, obj := range gws {
		if !ours[string(obj.Spec.GatewayClassName)] {
			continue
		}
		g := &gateway{obj: obj, accepted: true}
		if len(obj.Spec.Addresses) > 0 {
			g.accepted = false
			g.cond = append(g.cond, cond(string(gwv1.GatewayConditionAccepted), false, string(gwv1.GatewayReasonUnsupportedAddress),
				"spec.addresses is not supported: the Gateway's addresses are Gantry's (statusAddress)", obj.Generation))
			t.problem(providers.SeverityError, "Gateway", obj.Namespace, obj.Name, "spec.addresses", "static addresses are not supported; the Gateway is not served")
		}
		for _, ls := range obj.Spec.Listeners {
			g.listeners = append(g.listeners, t.loadListener(g, ls))
		}
		t.gateways = append(t.gateways, g)
	}
	t.detectConflicts()
	t.computeIsolation()
}

// entryPointFor maps a listener to the entrypoint with its port.
func (t *translator) entryPointFor(ls gwv1.Listener) (string, error) {
	names := make([]string, 0, len(t.opts.EntryPoints))
	for n := range t.opts.EntryPoints {
		names = append(names, n)
	}
	slices.Sort(names)
	udp := ls.Protocol == gwv1.UDPProtocolType
	for _, n := range names {
		ep := t.opts.EntryPoints[n]
		if ep.Port != int(ls.Port) || ep.UDP != udp {
			continue
		}
		if ls.Protocol == gwv1.HTTPProtocolType && ep.HTTPTLS {
			continue
		}
		return n, nil
	}
	proto := "TCP"
	if udp {
		proto = "UDP"
	}
	return "", fmt.Errorf("no %s entrypoint listens on port %d", proto, ls.Port)
}

// loadListener validates one listener and builds its conditions (except
// Conflicted, set by detectConflicts).
func (t *translator) loadListener(g *gateway, ls gwv1.Listener) *listener {
	l := &listener{gw: g, spec: ls, from: gwv1.NamespacesFromSame}
	gen := g.obj.Generation
	accepted := cond(string(gwv1.ListenerConditionAccepted), true, string(gwv1.ListenerReasonAccepted), "", gen)
	resolved := cond(string(gwv1.ListenerConditionResolvedRefs), true, string(gwv1.ListenerReasonResolvedRefs), "", gen)
	fail := func(c *metav1.Condition, reason gwv1.ListenerConditionReason, format string, a ...any) {
		if c.Status == metav1.ConditionFalse {
			return
		}
		msg := fmt.Sprintf(format, a...)
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(reason), msg
		t.problem(providers.SeverityError, "Gateway", g.obj.Namespace, g.obj.Name, "listener "+string(ls.Name), "%s", msg)
	}

	supported := t.supportedKinds(ls.Protocol)
	if supported == nil {
		fail(&accepted, gwv1.ListenerReasonUnsupportedProtocol, "protocol %q is not supported", ls.Protocol)
	}
	ep, err := t.entryPointFor(ls)
	if err != nil && supported != nil {
		fail(&accepted, gwv1.ListenerReasonPortUnavailable, "%v", err)
	}
	l.ep = ep

	// Route kinds: allowedRoutes.kinds, or every kind the protocol serves.
	var ar gwv1.AllowedRoutes
	if ls.AllowedRoutes != nil {
		ar = *ls.AllowedRoutes
	}
	if len(ar.Kinds) == 0 {
		for _, k := range supported {
			l.kinds = append(l.kinds, gwv1.RouteGroupKind{Group: new(gwv1.Group(gwv1.GroupName)), Kind: k})
		}
	} else {
		for _, k := range ar.Kinds {
			if ptrOr(k.Group, gwv1.GroupName) == gwv1.GroupName && slices.Contains(supported, k.Kind) {
				l.kinds = append(l.kinds, gwv1.RouteGroupKind{Group: new(gwv1.Group(gwv1.GroupName)), Kind: k.Kind})
				continue
			}
			fail(&resolved, gwv1.ListenerReasonInvalidRouteKinds, "route kind %s/%s is not supported on a %s listener", ptrOr(k.Group, gwv1.GroupName), k.Kind, ls.Protocol)
		}
	}
	if ar.Namespaces != nil {
		l.from = ptrOr(ar.Namespaces.From, gwv1.NamespacesFromSame)
		if l.from == gwv1.NamespacesFromSelector {
			if ar.Namespaces.Selector == nil {
				fail(&accepted, "InvalidRouteNamespacesSelector", "allowedRoutes.namespaces.from is Selector but no selector is set")
			} else if sel, err := metav1.LabelSelectorAsSelector(ar.Namespaces.Selector); err != nil {
				fail(&accepted, "InvalidRouteNamespacesSelector", "allowedRoutes.namespaces.selector: %v", err)
			} else {
				l.selector = sel
			}
		}
	}

	// TLS.
	switch ls.Protocol {
	case gwv1.HTTPProtocolType, gwv1.TCPProtocolType, gwv1.UDPProtocolType:
		if ls.TLS != nil {
			fail(&accepted, "InvalidTLSConfiguration", "tls must not be set on a %s listener", ls.Protocol)
		}
	case gwv1.HTTPSProtocolType, gwv1.TLSProtocolType:
		switch {
		case ls.TLS == nil:
			fail(&accepted, "InvalidTLSConfiguration", "a %s listener needs tls", ls.Protocol)
		case l.passthrough() && ls.Protocol == gwv1.HTTPSProtocolType:
			fail(&accepted, gwv1.ListenerReasonUnsupportedProtocol, "HTTPS listeners terminate TLS; use protocol TLS for Passthrough")
		case !l.passthrough():
			t.loadCertificates(g, ls, &resolved, fail)
		}
	}

	l.valid = g.accepted && accepted.Status == metav1.ConditionTrue && resolved.Status == metav1.ConditionTrue
	l.conds = []metav1.Condition{accepted, resolved}
	return l
}

// loadCertificates adds the listener's certificateRefs to the TLS store.
func (t *translator) loadCertificates(g *gateway, ls gwv1.Listener, resolved *metav1.Condition, fail func(*metav1.Condition, gwv1.ListenerConditionReason, string, ...any)) {
	if len(ls.TLS.CertificateRefs) == 0 {
		fail(resolved, gwv1.ListenerReasonInvalidCertificateRef, "tls.certificateRefs is empty; Terminate needs a certificate")
		return
	}
	type pem struct{ key, cert, keyPEM string }
	var ok []pem
	for i, ref := range ls.TLS.CertificateRefs {
		field := fmt.Sprintf("tls.certificateRefs[%d]", i)
		if ptrOr(ref.Group, "") != "" || ptrOr(ref.Kind, "Secret") != "Secret" {
			fail(resolved, gwv1.ListenerReasonInvalidCertificateRef, "%s: %s/%s is not a core Secret", field, ptrOr(ref.Group, ""), ptrOr(ref.Kind, "Secret"))
			continue
		}
		ns := string(ptrOr(ref.Namespace, gwv1.Namespace(g.obj.Namespace)))
		if ns != g.obj.Namespace && !t.granted("gateway.networking.k8s.io", "Gateway", g.obj.Namespace, "", "Secret", ns, string(ref.Name)) {
			fail(resolved, gwv1.ListenerReasonRefNotPermitted, "%s: Secret %s/%s is in another namespace and no ReferenceGrant allows it", field, ns, ref.Name)
			continue
		}
		cert, key, err := t.be.Certificate(ns, string(ref.Name))
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				fail(resolved, gwv1.ListenerReasonInvalidCertificateRef, "%s: Secret %s/%s does not exist", field, ns, ref.Name)
			} else {
				fail(resolved, gwv1.ListenerReasonInvalidCertificateRef, "%s: Secret %s/%s: %v", field, ns, ref.Name, err)
			}
			continue
		}
		ok = append(ok, pem{ns + "/" + string(ref.Name), cert, key})
	}
	if resolved.Status == metav1.ConditionFalse {
		return
	}
	for _, p := range ok {
		if t.certs[p.key] {
			continue
		}
		t.certs[p.key] = true
		t.conf.TLS.Certificates = append(t.conf.TLS.Certificates, &config.CertAndStores{
			Certificate: config.Certificate{CertFile: p.cert, KeyFile: p.keyPEM},
		})
	}
}

// detectConflicts marks the listeners of one Gateway on one entrypoint
// whose protocols cannot share a port (HTTP with anything TLS or TCP),
// and later duplicates of a protocol and hostname: Conflicted=True, not
// served. Listeners of different Gateways never conflict: Gateways share
// Gantry's entrypoints as they share Traefik's.
func (t *translator) detectConflicts() {
	type key struct {
		ep, proto, host string
	}
	for _, g := range t.gateways {
		seen := map[key]bool{}
		family := map[string]string{} // entrypoint → "http", "tls", "tcp" or "udp"
		for _, l := range g.listeners {
			gen := g.obj.Generation
			c := cond(string(gwv1.ListenerConditionConflicted), false, string(gwv1.ListenerReasonNoConflicts), "", gen)
			if l.ep != "" && l.valid {
				fam := map[gwv1.ProtocolType]string{gwv1.HTTPProtocolType: "http", gwv1.HTTPSProtocolType: "tls", gwv1.TLSProtocolType: "tls", gwv1.TCPProtocolType: "tcp", gwv1.UDPProtocolType: "udp"}[l.spec.Protocol]
				k := key{l.ep, string(l.spec.Protocol), strings.ToLower(string(ptrOr(l.spec.Hostname, "")))}
				switch f, ok := family[l.ep]; {
				case ok && f != fam:
					c = cond(string(gwv1.ListenerConditionConflicted), true, string(gwv1.ListenerReasonProtocolConflict), fmt.Sprintf("entrypoint %s already serves %s listeners", l.ep, f), gen)
				case seen[k] || (fam == "tcp" || fam == "udp") && ok:
					c = cond(string(gwv1.ListenerConditionConflicted), true, string(gwv1.ListenerReasonHostnameConflict), fmt.Sprintf("another listener serves %s on entrypoint %s with the same hostname", l.spec.Protocol, l.ep), gen)
				default:
					family[l.ep] = fam
					seen[k] = true
				}
				if c.Status == metav1.ConditionTrue {
					l.valid = false
					t.problem(providers.SeverityError, "Gateway", g.obj.Namespace, g.obj.Name, "listener "+string(l.spec.Name), "%s", c.Message)
				}
			}
			l.conds = []metav1.Condition{l.conds[0], c, l.conds[1]}
		}
	}
}

// computeIsolation lists, for each valid listener, the hostnames of the
// other valid listeners of its Gateway on its entrypoint that are more
// specific (Gateway API listener isolation: a request goes to the most
// specific listener's routes only).
func (t *translator) computeIsolation() {
	for _, g := range t.gateways {
		t.isolate(g)
	}
}

func (t *translator) isolate(g *gateway) {
	var all []*listener
	for _, l := range g.listeners {
		if l.valid && l.ep != "" {
			all = append(all, l)
		}
	}
	for _, l := range all {
		for _, o := range all {
			if o == l || o.ep != l.ep || o.spec.Hostname == nil || *o.spec.Hostname == "" {
				continue
			}
			if h := strings.ToLower(string(*o.spec.Hostname)); moreSpecific(h, l.spec.Hostname) && !slices.Contains(l.isolate, h) {
				l.isolate = append(l.isolate, h)
			}
		}
		slices.Sort(l.isolate)
	}
}

// finishGateways writes each Gateway's status once routes are counted.
func (t *translator) finishGateways() {
	for _, g := range t.gateways {
		gen := g.obj.Generation
		st := gwv1.GatewayStatus{Addresses: t.opts.Addresses}
		valid := 0
		for _, l := range g.listeners {
			prog := cond(string(gwv1.ListenerConditionProgrammed), true, string(gwv1.ListenerReasonProgrammed), "", gen)
			if l.valid {
				valid++
			} else {
				prog = cond(string(gwv1.ListenerConditionProgrammed), false, string(gwv1.ListenerReasonInvalid), "the listener is not valid", gen)
			}
			kinds := l.kinds
			if kinds == nil {
				kinds = []gwv1.RouteGroupKind{}
			}
			st.Listeners = append(st.Listeners, gwv1.ListenerStatus{
				Name:           l.spec.Name,
				SupportedKinds: kinds,
				AttachedRoutes: l.attached,
				Conditions:     append(slices.Clone(l.conds), prog),
			})
		}
		switch {
		case !g.accepted:
			st.Conditions = append(st.Conditions, g.cond...)
		case valid == len(g.listeners):
			st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayConditionAccepted), true, string(gwv1.GatewayReasonAccepted), "", gen))
		default:
			st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayConditionAccepted), valid > 0, string(gwv1.GatewayReasonListenersNotValid),
				fmt.Sprintf("%d of %d listeners are not valid", len(g.listeners)-valid, len(g.listeners)), gen))
		}
		if g.accepted && valid > 0 {
			st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayConditionProgrammed), true, string(gwv1.GatewayReasonProgrammed), "", gen))
		} else {
			st.Conditions = append(st.Conditions, cond(string(gwv1.GatewayConditionProgrammed), false, string(gwv1.GatewayReasonInvalid), "no listener is served", gen))
		}
		t.status.Gateways[types.NamespacedName{Namespace: g.obj.Namespace, Name: g.obj.Name}] = st
	}
}

package gateway

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// translator holds one Translate run.
type translator struct {
	in       *Input
	opts     Options
	be       Backends
	conf     *config.Configuration
	problems []providers.Problem
	status   Status
	gateways []*gateway
	nsLabels map[string]labels.Set
	routers  []rankedRouter
	certs    map[string]bool // "ns/name" of certificates added
}

// Translate computes the configuration, problems and statuses for in.
// It never fails: what cannot be used is left out, with a Problem and a
// status condition naming it.
func Translate(in *Input, be Backends, opts Options) Result {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	t := &translator{
		in:   in,
		opts: opts,
		be:   be,
		conf: config.New(),
		status: Status{
			GatewayClasses: map[string]GatewayClassStatus{},
			Gateways:       map[types.NamespacedName]gwv1.GatewayStatus{},
			Routes:         map[RouteKey][]gwv1.RouteParentStatus{},
		},
		nsLabels: map[string]labels.Set{},
		certs:    map[string]bool{},
	}
	for _, ns := range in.Namespaces {
		t.nsLabels[ns.Name] = labels.Set(ns.Labels)
	}
	t.loadGateways()
	t.loadHTTPRoutes()
	t.loadGRPCRoutes()
	t.loadTLSRoutes()
	if opts.ExperimentalChannel {
		t.loadTCPRoutes()
		t.loadUDPRoutes()
	}
	t.assignPriorities()
	t.finishGateways()
	slices.SortFunc(t.problems, func(a, b providers.Problem) int {
		return cmp.Or(strings.Compare(a.Source, b.Source), strings.Compare(a.Message, b.Message))
	})
	if t.conf.TCP.Empty() {
		t.conf.TCP = nil
	}
	if t.conf.UDP.Empty() {
		t.conf.UDP = nil
	}
	return Result{Config: t.conf, Problems: t.problems, Status: t.status}
}

// problem records a Problem about kind namespace/name (field optional).
func (t *translator) problem(sev providers.Severity, kind, ns, name, field, format string, a ...any) {
	src := kind + " " + ns + "/" + name
	if field != "" {
		src += " " + field
	}
	t.problems = append(t.problems, providers.Problem{
		Provider: ProviderName,
		Source:   src,
		Message:  fmt.Sprintf(format, a...),
		Severity: sev,
	})
}

// quote renders a rule argument: backquoted unless it holds a backquote.
func quote(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return fmt.Sprintf("%q", s)
}

// objName joins name parts with '-' for configuration object names.
func objName(parts ...string) string {
	return strings.ReplaceAll(strings.Join(parts, "-"), "@", "-")
}

// ptrOr returns *p, or def when p is nil.
func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

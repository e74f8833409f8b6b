package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/kubernetes/ingressnginx"
	"github.com/gantry-proxy/gantry/providers/kubernetes/k8s"
)

const migrateUsage = `Usage:
  gantry migrate ingress-nginx [--kubeconfig=FILE] [--namespace=NS] [--output=text|json]
      [--ingressClass=nginx] [--controllerClass=k8s.io/ingress-nginx]
      [--watchIngressWithoutClass] [--ingressClassByName]
      [--allowCrossNamespaceResources] [--globalAllowedResponseHeaders=H1,H2]
      [--timeout=30s]

Reads the cluster (--kubeconfig, else $KUBECONFIG, else the pod's service
account) and prints, per Ingress of ingress-nginx's class and per
nginx.ingress.kubernetes.io/ annotation, whether Gantry serves it exactly,
approximates it (and how) or refuses it, with totals. The options are
providers.kubernetesIngressNGINX's. Nothing is written to the cluster.
`

// migrateCmd runs "gantry migrate ingress-nginx": it returns 0 after
// printing the report, 1 when the cluster cannot be read, 2 on a usage
// error.
func migrateCmd(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "ingress-nginx" {
		fmt.Fprint(stderr, "gantry migrate: want the source to migrate from: ingress-nginx\n\n"+migrateUsage)
		return 2
	}
	fs := flag.NewFlagSet("migrate ingress-nginx", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		kubeconfig = fs.String("kubeconfig", envValue(environ, "KUBECONFIG"), "")
		namespace  = fs.String("namespace", "", "")
		output     = fs.String("output", "text", "")
		timeout    = fs.Duration("timeout", 30*time.Second, "")
		headers    = fs.String("globalAllowedResponseHeaders", "", "")
		o          ingressnginx.Options
	)
	fs.StringVar(&o.IngressClass, "ingressClass", "", "")
	fs.StringVar(&o.ControllerClass, "controllerClass", "", "")
	fs.BoolVar(&o.WatchIngressWithoutClass, "watchIngressWithoutClass", false, "")
	fs.BoolVar(&o.IngressClassByName, "ingressClassByName", false, "")
	fs.BoolVar(&o.AllowCrossNamespaceResources, "allowCrossNamespaceResources", false, "")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		fmt.Fprintf(stderr, "gantry migrate ingress-nginx: %v\n\n%s", err, migrateUsage)
		return 2
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(stderr, "gantry migrate ingress-nginx: --output=%q: want text or json\n", *output)
		return 2
	}
	for h := range strings.SplitSeq(*headers, ",") {
		if h = strings.TrimSpace(h); h != "" {
			o.GlobalAllowedResponseHeaders = append(o.GlobalAllowedResponseHeaders, h)
		}
	}
	rep, err := readMigration(ctx, k8s.ClientOptions{Kubeconfig: *kubeconfig, UserAgent: "gantry-migrate"}, *namespace, o, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "gantry migrate ingress-nginx: %v\n", err)
		return 1
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "gantry migrate ingress-nginx: %v\n", err)
			return 1
		}
		return 0
	}
	if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "gantry migrate ingress-nginx: %v\n", err)
		return 1
	}
	return 0
}

// readMigration lists the cluster's objects once, through the provider's
// own informers, and returns the report of their translation.
func readMigration(ctx context.Context, co k8s.ClientOptions, ns string, o ingressnginx.Options, timeout time.Duration) (*ingressnginx.Report, error) {
	client, err := k8s.NewClient(co)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := k8s.NewWatcher("migrate", client, 0, slog.New(slog.DiscardHandler))
	src, err := ingressnginx.Watch(w, client, ns)
	if err != nil {
		return nil, err
	}
	var rep *ingressnginx.Report
	var last []providers.Problem
	err = w.Run(ctx, func() providers.Snapshot {
		res := src.Translate(o)
		rep = &res.Report
		cancel()
		return providers.Snapshot{Config: res.Config}
	}, func(s providers.Snapshot) {
		if s.KeepConfig {
			last = s.Problems
		}
	})
	if err != nil {
		return nil, err
	}
	if rep == nil {
		msg := fmt.Sprintf("the cluster was not read within %s", timeout)
		if len(last) > 0 {
			msg += ": " + last[0].Message
		}
		return nil, errors.New(msg)
	}
	return rep, nil
}

// envValue returns the value of name in environ ("" when unset).
func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// migrationHolder holds the running providers.kubernetesIngressNGINX
// (replaced by static configuration reloads) for the dashboard's
// migration page.
type migrationHolder struct {
	p atomic.Pointer[ingressnginx.Provider]
}

// set keeps p when it is the ingress-nginx provider.
func (h *migrationHolder) set(p providers.Provider) {
	if h == nil {
		return
	}
	if ip, ok := p.(*ingressnginx.Provider); ok {
		h.p.Store(ip)
	}
}

// clear forgets the provider when section providers.<kind> was removed.
func (h *migrationHolder) clear(kind string) {
	if h != nil && kind == "kubernetesIngressNGINX" {
		h.p.Store(nil)
	}
}

// report is dashboard.Options.Migration.
func (h *migrationHolder) report() *ingressnginx.Report {
	if p := h.p.Load(); p != nil {
		return p.Report()
	}
	return nil
}

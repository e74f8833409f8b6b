package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/acme"
	"github.com/gantry-proxy/gantry/providers/builtin"
	"github.com/gantry-proxy/gantry/router"
)

// validateCmd checks the static configuration and the dynamic
// configuration of the file provider the way run would apply it (merge,
// Validate, rule parsing, references, handler building), prints every
// problem as "error: …" or "warning: …" with its source, and returns 1 when
// there is an error, else 0.
func validateCmd(ctx context.Context, c cliArgs, environ []string, stdout, stderr io.Writer) int {
	l, err := loadStatic(c, environ)
	if se, ok := errors.AsType[*staticError](err); ok {
		// Every static error, and the warnings beside them.
		for _, w := range se.warnings {
			fmt.Fprintln(stdout, "warning:", w)
		}
		for _, e := range se.errs {
			fmt.Fprintln(stdout, "error: static configuration:", e)
		}
		fmt.Fprintf(stdout, "invalid: %s, %s\n", count(len(se.errs), "error"), count(len(se.warnings), "warning"))
		return 1
	}
	if err != nil {
		fmt.Fprintf(stdout, "error: static configuration: %v\n", err)
		fmt.Fprintln(stdout, "invalid: 1 error")
		return 1
	}
	where := "flags and environment"
	if l.File != "" {
		where = l.File
	}
	fmt.Fprintf(stdout, "static configuration: %s\n", where)
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	errs, warns := dynamicProblems(ctx, l, stdout, log)
	warns = append(slices.Clone(l.Warnings), warns...)
	errs = append(errs, observabilityErrors(ctx, l.Config)...)
	for _, w := range warns {
		fmt.Fprintln(stdout, "warning:", w)
	}
	for _, e := range errs {
		fmt.Fprintln(stdout, "error:", e)
	}
	if len(errs) > 0 {
		fmt.Fprintf(stdout, "invalid: %s, %s\n", count(len(errs), "error"), count(len(warns), "warning"))
		return 1
	}
	fmt.Fprintf(stdout, "valid: %s\n", count(len(warns), "warning"))
	return 0
}

// dynamicProblems checks the providers' options, the certificate
// resolvers and the file provider's configuration as run would apply it
// (merge, entrypoint TLS, compile), printing what it checked to stdout,
// and returns the errors and warnings found.
func dynamicProblems(ctx context.Context, l *loaded, stdout io.Writer, log *slog.Logger) (errs, warns []string) {
	set, err := buildProviders(l.Config, log)
	if err != nil {
		errs = append(errs, err.Error())
	}
	var certs *acme.Manager
	if len(l.Config.CertificatesResolvers) > 0 {
		// Options and DNS providers (with their environment variables) are
		// checked as at run; nothing is ordered or read from the store.
		if certs, err = acme.New(l.Config, nil, log, versionString()); err != nil {
			errs = append(errs, err.Error())
		} else {
			fmt.Fprintf(stdout, "certificate resolvers: %d checked\n", len(l.Config.CertificatesResolvers))
		}
	}
	snaps := map[string]providers.Snapshot{builtin.Name: {Config: builtin.Build(l.Config)}}
	if set != nil {
		for _, p := range set.list {
			if n := p.Name(); n != builtin.Name && n != "file" {
				fmt.Fprintf(stdout, "dynamic configuration: provider %s: options checked; its configuration is read at run time only\n", n)
			}
		}
		fileSnaps, ferrs := fileSnapshots(ctx, l.Config, log)
		errs = append(errs, ferrs...)
		for name, s := range fileSnaps {
			snaps[name] = s
			fmt.Fprintf(stdout, "dynamic configuration: provider %s\n", name)
		}
	}
	// The provider problems' messages by "provider kind name": compiling
	// finds some again (a bad server URL), said once.
	reported := map[string][]string{}
	m, err := providers.Merge(snaps)
	if err != nil {
		errs = append(errs, fmt.Sprintf("merge: %v", err))
	} else {
		for _, p := range m.Problems {
			for _, o := range p.Objects {
				reported[p.Provider+" "+o] = append(reported[p.Provider+" "+o], p.Message)
			}
			if p.Severity == providers.SeverityError {
				errs = append(errs, p.String())
			} else {
				warns = append(warns, p.String())
			}
		}
		pool := generation.NewPool(log, generation.PoolOptions{ServersTransport: l.Config.ServersTransport})
		in, err := newInternals(l.Config, log, internalSources{active: router.NewActive(), pool: pool})
		if err != nil {
			errs = append(errs, err.Error())
			in = standInInternals(l.Config)
		}
		ropts := instance.RouterOptions(l.Config)
		if dyn, err := entrypoints.New(log, l.Config, nil, nil); err == nil {
			// The dynamic entrypoints the files ask for, checked against
			// dynamicEntryPoints.allowed (nothing is bound).
			eps, probs := dyn.Check(m)
			ropts.EntryPoints = append(ropts.EntryPoints, eps...)
			for _, p := range probs {
				errs = append(errs, p.String())
			}
		}
		m = instance.EntryPointTLSOf(l.Config).Apply(m, ropts.EntryPoints)
		if certs != nil {
			_, probs := certs.Wants(m.Config)
			for _, p := range probs {
				errs = append(errs, p.String())
			}
		} else if len(l.Config.CertificatesResolvers) == 0 {
			// No resolvers at all: run reports each certResolver a router
			// names (certSwitch); so does validate (issue 23).
			for _, p := range acme.UndefinedResolverProblems(m.Config) {
				errs = append(errs, p.String())
			}
		}
		gen := generation.New(pool, m, generation.Options{
			Log:                   log,
			Internal:              in.handlers,
			EntryPointMiddlewares: instance.EntryPointMiddlewares(l.Config),
			NotFound:              instance.EntryPointNotFound(l.Config),
		})
		t := router.Compile(ctx, m, gen, ropts)
		gen.Close()
		in.closeWithin(0) // validate sends nothing
		pool.Close()
		e, w := splitReport(t.Report(), objectSources(l.Config), reported)
		errs = append(errs, e...)
		warns = append(warns, w...)
		fmt.Fprintf(stdout, "routers: %d, disabled: %d\n", t.Report().RouterCount(), t.Report().Count(router.StatusDisabled))
	}
	return errs, warns
}

// standInInternals are the internal services c enables, each a handler
// that serves nothing, for when building them failed: that error is
// reported once, and the routers of those services are not reported again
// as naming a service that is not enabled.
func standInInternals(c *static.Configuration) *internals {
	in := &internals{handlers: map[string]http.Handler{}}
	if c.API != nil {
		in.handlers["api@internal"] = http.NotFoundHandler()
		in.handlers["dashboard@internal"] = http.NotFoundHandler()
	}
	if c.Metrics != nil && c.Metrics.Prometheus != nil {
		in.handlers["prometheus@internal"] = http.NotFoundHandler()
	}
	if c.Ping != nil {
		in.handlers["ping@internal"] = http.NotFoundHandler()
	}
	return in
}

// observabilityErrors builds what run builds for accessLog.otlp, log.otlp
// and tracing (metrics.otlp is built with the internal services) and
// returns their errors, each naming its option; nothing is sent (the
// exporters connect lazily and are shut down at once).
func observabilityErrors(ctx context.Context, c *static.Configuration) []string {
	var errs []string
	done, cancel := context.WithCancel(ctx)
	cancel() // Shutdown flushes nothing
	logs := func(section string, o *static.OTelLog) {
		if o == nil {
			return
		}
		l, err := observe.NewOTLPLogs(ctx, section, o, versionString())
		if err != nil {
			errs = append(errs, err.Error())
			return
		}
		_ = l.Shutdown(done)
	}
	if c.AccessLog != nil {
		logs("accessLog.otlp", c.AccessLog.OTLP)
	}
	if c.Log != nil {
		logs("log.otlp", c.Log.OTLP)
	}
	if c.Tracing != nil {
		tr, err := observe.NewTracing(ctx, c.Tracing)
		if err != nil {
			errs = append(errs, err.Error())
		} else {
			_ = tr.Shutdown(done)
		}
	}
	return errs
}

// count renders "1 error", "2 errors".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// splitReport returns the problems of disabled objects (and TLS problems)
// as errors and those of objects still in use as warnings. Objects of the
// file provider get the file (and line) defining them from where. A
// problem a provider already reported for the object (reported, by
// "provider kind name", messages ending with it) is left out.
func splitReport(r *router.Report, where map[string]string, reported map[string][]string) (errs, warns []string) {
	add := func(kind, name, status string, msgs []string) {
		for _, m := range msgs {
			if bare, prov, ok := strings.Cut(name, "@"); ok && slices.ContainsFunc(reported[prov+" "+kind+" "+bare], func(p string) bool {
				return strings.HasSuffix(p, m)
			}) {
				continue
			}
			line := fmt.Sprintf("%s %s: %s", kind, name, m)
			if bare, ok := strings.CutSuffix(name, "@file"); ok && where[kind+" "+bare] != "" {
				at := where[kind+" "+bare]
				if r := where["rule "+kind+" "+bare]; r != "" && strings.HasPrefix(m, "rule") {
					at = r // the rule's line is the one to edit
				}
				line = fmt.Sprintf("%s: %s %s: %s", at, kind, name, m)
			}
			if status == router.StatusDisabled {
				errs = append(errs, line)
			} else {
				warns = append(warns, line)
			}
		}
	}
	for name, s := range r.Routers {
		add("router", name, s.Status, s.Errors)
	}
	for name, s := range r.Services {
		add("service", name, s.Status, s.Errors)
	}
	for name, s := range r.Middlewares {
		add("middleware", name, s.Status, s.Errors)
	}
	for _, e := range r.TLS {
		errs = append(errs, "tls: "+e)
	}
	slices.Sort(errs)
	slices.Sort(warns)
	return errs, warns
}

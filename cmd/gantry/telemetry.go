package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/instance"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/consul"
)

// telemetry is what serve opens for the access log (accessLog) and the
// tracer (tracing), and how it ends them.
type telemetry struct {
	reopen  func()   // SIGUSR1: reopen the access log file (logrotate)
	closers []func() // in opening order; close runs them in reverse
}

// close flushes the access log's OTLP records and the spans still queued
// (bounded by the shutdown's flush budget) and closes the access log file.
func (t *telemetry) close() {
	for i := len(t.closers) - 1; i >= 0; i-- {
		t.closers[i]()
	}
	t.closers = nil
}

// openTelemetry opens the access log and the tracer c configures and wires
// them, with the internal services' observers and the ACME challenges,
// into w: the generation options every generation gets, and the access
// log's writer as a component. On error nothing stays open.
func openTelemetry(ctx context.Context, c *static.Configuration, log *slog.Logger, in *internals, fb *flushBudget, challenges *certSwitch, w *instance.Wiring) (_ *telemetry, err error) {
	t := &telemetry{reopen: func() {}}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	observers := in.observers()
	if c.AccessLog != nil {
		out, closeW, err := accessLogWriter(c.AccessLog)
		if err != nil {
			return nil, err
		}
		t.closers = append(t.closers, closeW)
		var accessLog *observe.AccessLog
		if _, ok := out.(*observe.File); ok {
			t.reopen = func() { // the lines buffered so far go to the renamed file first
				if err := accessLog.Reopen(); err != nil {
					log.Error("SIGUSR1: reopen the access log", "error", err)
					return
				}
				log.Info("SIGUSR1: reopened the access log", "path", c.AccessLog.FilePath)
			}
		}
		if accessLog, err = observe.NewAccessLog(out, c.AccessLog); err != nil {
			return nil, err
		}
		if c.AccessLog.OTLP != nil {
			l, err := observe.NewOTLPLogs(ctx, "accessLog.otlp", c.AccessLog.OTLP, versionString())
			if err != nil {
				return nil, err
			}
			t.closers = append(t.closers, func() { // flush the records still queued, bounded
				if err := l.Shutdown(fb.context()); err != nil {
					log.Warn("accessLog.otlp: flush at shutdown", "error", err)
				}
			})
			accessLog.SetOTLP(l)
		}
		observers = append(observers, accessLog)
		w.Components = append(w.Components, instance.Component{Name: "access log", Run: accessLog.Run})
	}
	var tracing *observe.Tracing
	if c.Tracing != nil {
		if tracing, err = observe.NewTracing(ctx, c.Tracing); err != nil {
			return nil, err
		}
		t.closers = append(t.closers, func() { // flush the spans still queued, bounded
			if err := tracing.Shutdown(fb.context()); err != nil {
				log.Warn("tracing: flush at shutdown", "error", err)
			}
		})
	}
	w.Generation = generation.Options{
		Observer:   observe.Tee(observers...),
		Tracing:    tracing,
		Internal:   in.handlers,
		Challenges: challenges,
	}
	return t, nil
}

// accessLogWriter opens accessLog.filePath for appending, or returns stdout.
func accessLogWriter(c *static.AccessLog) (io.Writer, func(), error) {
	if c.FilePath == "" {
		return os.Stdout, func() {}, nil
	}
	f, err := observe.OpenFile(c.FilePath)
	if err != nil {
		return nil, nil, fmt.Errorf("accessLog.filePath: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// applyListeners are told each configuration the instance applies, in
// this order: the metrics (reload count and time, right after the swap;
// the series of routers and services gone are dropped), the ACME resolvers
// (they derive the certificates routers need) and the cluster registration
// (the hash of what this instance routes).
func applyListeners(inst *instance.Instance, in *internals, certs *certSwitch, reg *consul.Registration) []instance.Listener {
	var ls []instance.Listener
	if in.metrics != nil || in.otlp != nil {
		ls = append(ls, instance.ListenerFunc(func(_ context.Context, _ *providers.Merged, at time.Time) {
			in.reloaded(at)
			if in.metrics == nil {
				return
			}
			// Drop the series of routers and services that are gone.
			if m := inst.Active().Load().Merged(); m != nil && m.Config != nil && m.Config.HTTP != nil {
				c := m.Config
				in.metrics.Keep(func(n string) bool { _, ok := c.HTTP.Routers[n]; return ok },
					func(n string) bool { _, ok := c.HTTP.Services[n]; return ok })
			} else {
				in.metrics.Keep(func(string) bool { return false }, func(string) bool { return false })
			}
		}))
	}
	ls = append(ls, instance.ListenerFunc(func(_ context.Context, m *providers.Merged, _ time.Time) { certs.Observe(m) }))
	if reg != nil {
		ls = append(ls, instance.ListenerFunc(func(_ context.Context, m *providers.Merged, _ time.Time) {
			// The cluster compares what instances route, not where it came
			// from: m.Version also hashes problems and origins (file paths,
			// container names), which differ between hosts serving the same
			// configuration. The content hash is the one instances agree on.
			v, err := providers.Hash(m.Config)
			if err != nil {
				v = m.Version
			}
			reg.SetVersion(v)
		}))
	}
	return ls
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// parseLevel maps Traefik's log levels to slog's: TRACE and DEBUG → Debug,
// INFO (and "") → Info, WARN/WARNING → Warn, ERROR, FATAL and PANIC →
// Error. Case-insensitive. Source: https://doc.traefik.io/traefik/observability/logs/
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug, nil
	case "", "INFO":
		return slog.LevelInfo, nil
	case "WARN", "WARNING":
		return slog.LevelWarn, nil
	case "ERROR", "FATAL", "PANIC":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown level %q (want DEBUG, INFO, WARN or ERROR)", s)
}

// newLogger builds the application logger from log: text ("common", the
// default) or JSON, at log.level, to log.filePath (appended) or stderr.
// The returned closer closes the file, if any.
func newLogger(c *static.Log, stderr io.Writer) (*slog.Logger, io.Closer, error) {
	return newLoggerLevel(c, stderr, new(slog.LevelVar), newFlushBudget(5*time.Second))
}

// newLoggerLevel is newLogger with the level held in lv (set to log.level
// here), so that a live reload can change it (reload.go), and log.otlp's
// flush at Close bounded by fb (the shutdown's budget, shared).
func newLoggerLevel(c *static.Log, stderr io.Writer, lv *slog.LevelVar, fb *flushBudget) (*slog.Logger, io.Closer, error) {
	if c == nil {
		c = &static.Log{}
	}
	level, err := parseLevel(c.Level)
	if err != nil {
		return nil, nil, fmt.Errorf("log.level: %w", err)
	}
	w := stderr
	var closer io.Closer = io.NopCloser(nil)
	if c.FilePath != "" {
		f, err := os.OpenFile(c.FilePath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("log.filePath: %w", err)
		}
		w, closer = f, f
	}
	lv.Set(level)
	opts := &slog.HandlerOptions{Level: lv}
	if c.OTLP != nil {
		// log.otlp: records go to the collector instead of the output, as
		// Traefik sends them (its hook discards the local line).
		l, err := observe.NewOTLPLogs(context.Background(), "log.otlp", c.OTLP, versionString())
		if err != nil {
			return nil, nil, err
		}
		return slog.New(l.Handler(lv)), otlpCloser{l: l, next: closer, budget: fb}, nil
	}
	var h slog.Handler
	if strings.EqualFold(c.Format, "json") {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h), closer, nil
}

// otlpCloser flushes the OTLP log records still queued (bounded by the
// shutdown's flushBudget), then closes next.
type otlpCloser struct {
	l      *observe.OTLPLogs
	next   io.Closer
	budget *flushBudget
}

func (c otlpCloser) Close() error {
	return errors.Join(c.l.Shutdown(c.budget.context()), c.next.Close())
}

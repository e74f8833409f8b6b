package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/providers/file"
)

// fileSnapshots reads the file provider's configuration once (for
// validate), by running the real provider without watching until its first
// publish. It returns the snapshot keyed by provider name, or errors naming
// the file provider option that is wrong.
func fileSnapshots(ctx context.Context, c *static.Configuration, log *slog.Logger) (map[string]providers.Snapshot, []string) {
	if c.Providers == nil || c.Providers.File == nil {
		return nil, nil
	}
	opts := *c.Providers.File
	no := false
	opts.Watch = &no
	path, what := opts.Directory, "directory"
	if path == "" {
		path, what = opts.Filename, "filename"
	}
	if _, err := os.Stat(path); err != nil {
		return nil, []string{fmt.Sprintf("providers.file.%s: %v", what, err)}
	}
	p, err := file.New(opts, log)
	if err != nil {
		return nil, []string{err.Error()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan providers.Snapshot, 1)
	done := make(chan error, 1)
	go func() {
		done <- p.Run(ctx, func(s providers.Snapshot) {
			select {
			case got <- s:
			default:
			}
		})
	}()
	select {
	case s := <-got:
		cancel()
		<-done
		return map[string]providers.Snapshot{p.Name(): s}, nil
	case err := <-done:
		if err == nil {
			err = fmt.Errorf("read %s: nothing was published", path)
		}
		return nil, []string{err.Error()}
	}
}

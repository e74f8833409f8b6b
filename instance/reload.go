package instance

import (
	"context"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
)

// removal is an entrypoint to remove once the new table is in, and the
// server (TCP or UDP) that serves it.
type removal struct {
	set  entrypoints.Listeners
	name string
}

// OpenEntryPoints is a live static reload's first step, before the routes
// change (ReloadStatic is the next): of changes, those of entryPoints.<name>
// are carried out on the running entrypoints, redirecting ones last so
// that their target exists:
//
//   - an added entrypoint is bound;
//   - a changed one is moved to its new settings without refusing a
//     connection (dataplane.Server.ReplaceEntryPoint; a TCP entrypoint
//     turned UDP, or back, is bound anew and the old one removed);
//   - a removed one is only noted: ReloadStatic removes it once no route
//     names it.
//
// running is the static configuration serving now, next the one read
// again. It returns the error of each change that failed, by Change.Path
// (a bind error, an invalid option); that entrypoint keeps running as it
// was. Call it after Start, on the goroutine that calls ReloadStatic.
func (i *Instance) OpenEntryPoints(ctx context.Context, changes []static.Change, running, next *static.Configuration) map[string]error {
	var eps []static.Change
	for _, ch := range changes {
		if strings.HasPrefix(ch.Path, "entryPoints.") {
			eps = append(eps, ch)
		}
	}
	redirects := func(ch static.Change) bool {
		ep := next.EntryPoints[strings.TrimPrefix(ch.Path, "entryPoints.")]
		return ep != nil && ep.HTTP != nil && ep.HTTP.Redirections != nil
	}
	slices.SortStableFunc(eps, func(a, b static.Change) int {
		ra, rb := redirects(a), redirects(b)
		switch {
		case ra == rb:
			return 0
		case rb:
			return -1
		}
		return 1
	})
	failed := map[string]error{}
	for _, ch := range eps {
		name := strings.TrimPrefix(ch.Path, "entryPoints.")
		old, nu := running.EntryPoints[name], next.EntryPoints[name]
		var err error
		switch {
		case ch.Kind == static.Added:
			err = i.setOf(nu).AddEntryPoint(ctx, name, nu)
		case ch.Kind == static.Removed:
			i.removing = append(i.removing, removal{i.setOf(old), name})
		case IsUDP(old) == IsUDP(nu):
			_, err = i.setOf(nu).ReplaceEntryPoint(ctx, name, nu, 0)
		default: // TCP <-> UDP: the new one opened, the old one removed
			if err = i.setOf(nu).AddEntryPoint(ctx, name, nu); err == nil {
				i.removing = append(i.removing, removal{i.setOf(old), name})
			}
		}
		if err != nil {
			failed[ch.Path] = err
		}
	}
	return failed
}

// setOf returns the server of ep: UDP ("…/udp") or TCP.
func (i *Instance) setOf(ep *static.EntryPoint) entrypoints.Listeners {
	if IsUDP(ep) {
		return i.udp
	}
	return i.tcp
}

// removeEntryPoints removes the entrypoints OpenEntryPoints noted; each
// drains within its graceTimeOut in the background.
func (i *Instance) removeEntryPoints() {
	for _, rm := range i.removing {
		if _, err := rm.set.RemoveEntryPoint(rm.name, 0); err != nil {
			i.log.Warn("static configuration reload: remove entrypoint", "entrypoint", rm.name, "error", err)
		}
	}
	i.removing = nil
}

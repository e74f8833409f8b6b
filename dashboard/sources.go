package dashboard

import (
	"context"
	"net/http"

	"github.com/gantry-proxy/gantry/dataplane/balance"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
	"github.com/gantry-proxy/gantry/router/routestats"
	"github.com/gantry-proxy/gantry/store"
)

// Tables gives the live routing table. RouterTables adapts *router.Active.
type Tables interface {
	// Current returns the table serving now; never nil.
	Current() Table
}

// Table is one compiled, immutable configuration generation; *router.Table
// satisfies it.
type Table interface {
	// Version is the merged configuration's version (hex hash).
	Version() string
	// Merged is what the table was compiled from; never nil.
	Merged() *providers.Merged
	// Replaced is closed when a newer table has been swapped in.
	Replaced() <-chan struct{}
	// Report gives each router's, service's and middleware's status
	// (Traefik's enabled, warning, disabled) and errors.
	Report() *router.Report
	// Explain simulates r arriving on entryPoint: which router wins and why
	// each candidate matched or not. It may allocate (not the hot path).
	Explain(entryPoint string, r *http.Request) *router.Explanation
}

// RouterTables adapts the live holder of router tables to Tables.
func RouterTables(a *router.Active) Tables { return activeTables{a} }

type activeTables struct{ a *router.Active }

func (t activeTables) Current() Table { return t.a.Load() }

// StreamStats implements streamStats (tcp.go).
func (t activeTables) StreamStats() *routestats.Registry { return t.a.Stats() }

// Health gives the state of every upstream server; PoolHealth adapts
// *generation.Pool.
type Health interface {
	// Servers returns one entry per server; safe for concurrent use.
	Servers() []Server
	// Changed is closed at the next health change; call again for a fresh channel.
	Changed() <-chan struct{}
}

// Server is one upstream server as the pool sees it.
type Server = balance.BackendStatus

// Sources gives each provider's state; *providers.Aggregator satisfies it.
type Sources interface {
	Sources() map[string]providers.SourceState
}

// History gives applied configurations; *store.DB satisfies it.
type History interface {
	History(ctx context.Context, limit int) ([]store.Revision, error)
	Revision(ctx context.Context, version string) (*store.Revision, error)
}

// PoolHealth adapts the dataplane's backend pool to Health.
func PoolHealth(p *generation.Pool) Health { return poolHealth{p} }

type poolHealth struct{ p *generation.Pool }

func (h poolHealth) Changed() <-chan struct{} { return h.p.Changed() }

func (h poolHealth) Servers() []Server { return h.p.Status() }

package entrypoints

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/router"
)

// Listeners opens and closes entrypoints of one protocol on a running
// server: dataplane.Server for TCP (HTTP, TCP routers, HTTP/3 when the
// template sets it), udpproxy.Server for UDP.
type Listeners interface {
	AddEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint) error
	// ReplaceEntryPoint moves name to cfg (another address or other
	// settings) without refusing a connection: the new listener accepts
	// before the old one drains; on error the old one serves on.
	ReplaceEntryPoint(ctx context.Context, name string, cfg *static.EntryPoint, grace time.Duration) (<-chan struct{}, error)
	RemoveEntryPoint(name string, grace time.Duration) (<-chan struct{}, error)
}

// DefaultMaxEntryPoints is dynamicEntryPoints.maxEntryPoints when unset.
const DefaultMaxEntryPoints = 100

// validName bounds a dynamic entrypoint's name, which appears in logs,
// metrics labels and routers' entryPoints: 1 to 63 of A-Z, a-z, 0-9, '_'
// and '-', starting with a letter or digit. A function, not a regexp: the
// {0,62} repetition compiled at package init cost 59 KB at every start.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 63 || name[0] == '_' || name[0] == '-' {
		return false
	}
	for i := range len(name) {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Manager keeps the dynamic entrypoints of a running Gantry in step with
// the merged configuration. Open and Retire are called by one goroutine at
// a time (instance.Instance.Apply).
type Manager struct {
	log      *slog.Logger
	tcp, udp Listeners // udp may be nil: UDP requests are then problems
	allowed  []Range
	max      int // dynamicEntryPoints.maxEntryPoints
	template *static.EntryPoint
	static   map[string]*static.EntryPoint // the static entrypoints (their names are taken)

	mu sync.Mutex
	// tmpl counts template changes (SetStatic): a listener opened with an
	// older template is replaced at the next Open.
	tmpl    int
	serving map[string]served // the listeners open, by name
	wanted  map[string]bool   // names the last Open kept
}

// served is one open dynamic entrypoint.
type served struct {
	addr address
	tmpl int
}

// New returns a Manager for the static configuration c (its entryPoints
// and dynamicEntryPoints), opening listeners through tcp and udp (nil: no
// UDP). Errors name the bad option of dynamicEntryPoints.
func New(log *slog.Logger, c *static.Configuration, tcp, udp Listeners) (*Manager, error) {
	m := &Manager{log: log, tcp: tcp, udp: udp, serving: map[string]served{}}
	if err := m.SetStatic(c); err != nil {
		return nil, err
	}
	return m, nil
}

// SetStatic takes a new static configuration (a live static reload): its
// allow-list, template and static entrypoint names apply from the next
// Open, which closes what the allow-list no longer permits (after the
// swap, as Retire) and moves the open listeners to a changed template
// without refusing a connection. On error nothing changes.
func (mg *Manager) SetStatic(c *static.Configuration) error {
	var allowed []Range
	var tmpl *static.EntryPoint
	limit := DefaultMaxEntryPoints
	if d := c.DynamicEntryPoints; d != nil {
		if d.MaxEntryPoints < 0 {
			return fmt.Errorf("dynamicEntryPoints.maxEntryPoints %d: want a positive number (0 for %d)", d.MaxEntryPoints, DefaultMaxEntryPoints)
		}
		if d.MaxEntryPoints > 0 {
			limit = d.MaxEntryPoints
		}
		var err error
		if allowed, err = ParseAllowed(d.Allowed); err != nil {
			return err
		}
		if err := CheckTemplate(d.Template); err != nil {
			return err
		}
		tmpl = d.Template
	}
	mg.mu.Lock()
	defer mg.mu.Unlock()
	if !reflect.DeepEqual(tmpl, mg.template) {
		mg.tmpl++
	}
	mg.allowed, mg.template, mg.static, mg.max = allowed, tmpl, c.EntryPoints, limit
	return nil
}

// request is one provider's ask for one entrypoint.
type request struct {
	qualified string // "redis@docker"
	provider  string
	source    string // where: "container r label gantry.entrypoints.redis.address"
	addr      address
}

// Open binds every entrypoint mc asks for that is allowed and not yet
// serving, so that routes naming it can be swapped in next, and returns the
// dynamic entrypoints serving now (for router.Options.EntryPoints; they are
// never defaults) and one problem per request left unserved: an address
// outside dynamicEntryPoints.allowed or not an address at all, a name of a
// static entrypoint, two providers asking for one name with different
// addresses, a port that cannot be bound (the others are opened all the
// same). A request whose address changed (or, after SetStatic, whose
// template changed) moves its listener with ReplaceEntryPoint: the new one
// accepts before the old one drains, and if the new address cannot be
// bound the old one serves on. A request for the address of a listener no
// request keeps closes that listener first. A failed bind is tried again
// at the next Open. A listener whose request simply went away stays open:
// Retire closes it after the swap.
func (mg *Manager) Open(ctx context.Context, mc *providers.Merged) ([]router.EntryPoint, []providers.Problem) {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	var problems []providers.Problem
	fail := mg.failer(&problems)
	byName := mg.requests(mc, fail)
	ok := mg.plan(byName, fail, true) // the requests to serve
	mg.wanted = map[string]bool{}
	for name := range ok {
		mg.wanted[name] = true
	}
	// At most mg.max: those open already first, then by name.
	if len(ok) > mg.max {
		names := slices.SortedFunc(maps.Keys(ok), func(a, b string) int {
			_, oa := mg.serving[a]
			_, ob := mg.serving[b]
			if oa != ob {
				if oa {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, name := range names[mg.max:] {
			fail(byName[name], name, fmt.Sprintf("more than dynamicEntryPoints.maxEntryPoints (%d) dynamic entrypoints are asked for", mg.max))
			delete(ok, name)
			delete(mg.wanted, name)
		}
	}
	// Addresses asked for anew are freed first from listeners no request
	// keeps (their connections drain).
	binding := map[string]bool{}
	for name, r := range ok {
		if cur, open := mg.serving[name]; !open || cur.addr.key() != r.addr.key() {
			binding[r.addr.key()] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(mg.serving)) {
		if cur := mg.serving[name]; !mg.wanted[name] && binding[cur.addr.key()] {
			mg.remove(name, cur.addr, "another entrypoint asks for its address")
		}
	}
	var out []router.EntryPoint
	for _, name := range slices.Sorted(maps.Keys(ok)) {
		r := ok[name]
		cur, open := mg.serving[name]
		ls := mg.listeners(r.addr)
		switch {
		case !open:
			if err := ls.AddEntryPoint(ctx, name, mg.config(r.addr)); err != nil {
				fail(byName[name], name, bindError(name, err))
				delete(mg.wanted, name)
				continue
			}
			mg.log.Info("dynamic entrypoint opened", "entrypoint", name, "address", r.addr.raw, "asked_by", r.source)
		case cur.addr.udp != r.addr.udp:
			// Another server: no handover between protocols.
			mg.remove(name, cur.addr, "its protocol changed")
			if err := ls.AddEntryPoint(ctx, name, mg.config(r.addr)); err != nil {
				fail(byName[name], name, bindError(name, err))
				delete(mg.wanted, name)
				continue
			}
		case cur.addr.key() != r.addr.key() || cur.tmpl != mg.tmpl:
			if _, err := ls.ReplaceEntryPoint(ctx, name, mg.config(r.addr), 0); err != nil {
				p := len(problems)
				fail(byName[name], name, bindError(name, err))
				problems[p].Message = strings.TrimSuffix(problems[p].Message, "; not opened") + "; it keeps serving as " + cur.addr.raw
				problems[p].Severity = providers.SeverityWarning // still routed
				out = append(out, router.EntryPoint{Name: name, UDP: cur.addr.udp, Dynamic: true})
				continue
			}
			mg.log.Info("dynamic entrypoint moved", "entrypoint", name, "from", cur.addr.raw, "address", r.addr.raw)
		}
		mg.serving[name] = served{addr: r.addr, tmpl: mg.tmpl}
		out = append(out, router.EntryPoint{Name: name, UDP: r.addr.udp, Dynamic: true})
	}
	return out, problems
}

// failer returns the function adding a problem for requests rs of name
// to problems.
func (mg *Manager) failer(problems *[]providers.Problem) func(rs []request, name, msg string) {
	return func(rs []request, name, msg string) {
		p := providers.Problem{Provider: rs[0].provider, Objects: []string{"entrypoint " + name}, Severity: providers.SeverityError,
			Message: "entrypoint " + name + ": " + msg + "; not opened"}
		var srcs []string
		for _, r := range rs {
			srcs = append(srcs, r.source)
		}
		p.Source = strings.Join(srcs, ", ")
		if len(rs) > 1 {
			p.Provider = "aggregator"
		}
		*problems = append(*problems, p)
	}
}

// plan returns, by name, the requests of byName to serve: one address
// per name, not a static entrypoint, a valid name, inside the allow-list,
// and (when bind) a server for its protocol; each other one is a problem
// through fail.
func (mg *Manager) plan(byName map[string][]request, fail func([]request, string, string), bind bool) map[string]request {
	ok := map[string]request{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		rs := byName[name]
		a := rs[0].addr
		if len(rs) > 1 && slices.ContainsFunc(rs[1:], func(r request) bool { return r.addr.key() != a.key() }) {
			var asks []string
			for _, r := range rs {
				asks = append(asks, fmt.Sprintf("%q by %s", r.addr.raw, r.provider))
			}
			fail(rs, name, "asked for with different addresses ("+strings.Join(asks, ", ")+")")
			continue
		}
		if st, isStatic := mg.static[name]; isStatic {
			if st != nil && sameStatic(st.Address, a) {
				continue // the static entrypoint already is what was asked for
			}
			fail(rs, name, "is an entrypoint of the static configuration (address "+staticAddr(st)+"); a provider cannot redefine it")
			continue
		}
		if !validName(name) {
			fail(rs, name, "the name must be 1-63 letters, digits, '-' or '_', starting with a letter or digit")
			continue
		}
		if msg := mg.permitted(a); msg != "" {
			fail(rs, name, msg)
			continue
		}
		if bind && mg.listeners(a) == nil {
			fail(rs, name, "UDP dynamic entrypoints are not served by this Gantry")
			continue
		}
		ok[name] = rs[0]
	}
	return ok
}

// Check is Open without binding anything (gantry validate): the dynamic
// entrypoints mc would get and the problems of the requests it would
// refuse (a bind failure aside).
func (mg *Manager) Check(mc *providers.Merged) ([]router.EntryPoint, []providers.Problem) {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	var problems []providers.Problem
	fail := mg.failer(&problems)
	var out []router.EntryPoint
	ok := mg.plan(mg.requests(mc, fail), fail, false)
	for _, name := range slices.Sorted(maps.Keys(ok)) {
		out = append(out, router.EntryPoint{Name: name, UDP: ok[name].addr.udp, Dynamic: true})
	}
	return out, problems
}

// listeners returns the Listeners of a's protocol (nil for UDP without a
// UDP server).
func (mg *Manager) listeners(a address) Listeners {
	if a.udp {
		return mg.udp
	}
	return mg.tcp
}

// Retire closes, each with its grace period (the template's
// transport.lifeCycle.graceTimeOut, default 10s), the dynamic entrypoints
// the last Open did not keep. Call it after the routes of that Open's
// configuration are swapped in. The drains run in the servers' goroutines
// (their Shutdown waits for them).
func (mg *Manager) Retire() {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(mg.serving)) {
		if !mg.wanted[name] {
			mg.remove(name, mg.serving[name].addr, "no provider asks for it any more")
		}
	}
}

// Serving returns the dynamic entrypoints open, each as the entrypoint
// configuration it serves with (the template and its address), for the
// API.
func (mg *Manager) Serving() map[string]*static.EntryPoint {
	mg.mu.Lock()
	defer mg.mu.Unlock()
	out := make(map[string]*static.EntryPoint, len(mg.serving))
	for n, sv := range mg.serving {
		out[n] = mg.config(sv.addr)
	}
	return out
}

func (mg *Manager) remove(name string, a address, why string) {
	delete(mg.serving, name)
	if _, err := mg.listeners(a).RemoveEntryPoint(name, 0); err != nil {
		mg.log.Warn("dynamic entrypoint: close", "entrypoint", name, "error", err)
		return
	}
	mg.log.Info("dynamic entrypoint closing; draining", "entrypoint", name, "address", a.raw, "reason", why)
}

// requests groups mc's entrypoint requests by listener name (the
// qualifier removed), each sorted by provider; an address that does not
// parse is a problem at once.
func (mg *Manager) requests(mc *providers.Merged, fail func([]request, string, string)) map[string][]request {
	out := map[string][]request{}
	if mc == nil || mc.Config == nil {
		return out
	}
	for _, q := range slices.Sorted(maps.Keys(mc.Config.EntryPoints)) {
		ep := mc.Config.EntryPoints[q]
		name, prov := q, providers.ProviderOf(q)
		if prov != "" {
			name = q[:len(q)-len(prov)-1]
		}
		src := mc.Origins["entrypoint "+q]
		if src == "" {
			src = "entrypoint " + q
		}
		r := request{qualified: q, provider: prov, source: src}
		raw := ""
		if ep != nil {
			raw = ep.Address
		}
		a, err := parseAddress(raw)
		if err != nil {
			fail([]request{r}, name, err.Error())
			continue
		}
		r.addr = a
		out[name] = append(out[name], r)
	}
	return out
}

// permitted returns "" when a is inside dynamicEntryPoints.allowed, else
// why not.
func (mg *Manager) permitted(a address) string {
	if len(mg.allowed) == 0 {
		return fmt.Sprintf("address %q: dynamicEntryPoints.allowed is not set in the static configuration, so no provider may open a listener", a.raw)
	}
	for _, r := range mg.allowed {
		if r.permits(a) {
			return ""
		}
	}
	var list []string
	for _, r := range mg.allowed {
		list = append(list, r.String())
	}
	return fmt.Sprintf("address %q is outside dynamicEntryPoints.allowed (%s)", a.raw, strings.Join(list, ", "))
}

// config is the static entrypoint of a: the template with a's address.
func (mg *Manager) config(a address) *static.EntryPoint {
	var c static.EntryPoint
	if mg.template != nil {
		c = *mg.template
	}
	c.Address = a.listen()
	if a.udp {
		c.Address += "/udp"
	}
	return &c
}

func sameStatic(staticAddress string, a address) bool {
	sa, err := parseAddress(staticAddress)
	return err == nil && sa.key() == a.key()
}

func staticAddr(st *static.EntryPoint) string {
	if st == nil {
		return `""`
	}
	return fmt.Sprintf("%q", st.Address)
}

// bindError is the problem text of a listener that could not be opened or
// moved: the servers' error without its own "entrypoint <name>: " prefix
// (the problem names the entrypoint already).
func bindError(name string, err error) string {
	return strings.TrimPrefix(err.Error(), "entrypoint "+name+": ") + " (tried again at the next configuration change)"
}

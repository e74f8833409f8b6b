package tcpproxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-proxy/gantry/router/tcpmux"
)

// Server is one TCP server of a load balancer. Healthy is written by its
// health checker only and read by Pick; a server without a checker stays
// healthy.
type Server struct {
	Address string
	TLS     bool
	Weight  int
	healthy *atomic.Bool
}

// NewServer returns a healthy server.
func NewServer(addr string, useTLS bool, weight int) *Server {
	s := &Server{Address: addr, TLS: useTLS, Weight: weight, healthy: new(atomic.Bool)}
	s.healthy.Store(true)
	return s
}

// ShareHealth makes s read and write the health state h (from
// HealthStates.Acquire), so that it starts from what the same server of
// the previous generation knew. Call it before s is used.
func (s *Server) ShareHealth(h *atomic.Bool) { s.healthy = h }

// Healthy reports the last health check result (true without checks).
func (s *Server) Healthy() bool { return s.healthy.Load() }

// HealthStates keeps the health of checked TCP servers across generations,
// by key (the service, the address and the check): a new generation's
// server shares its predecessor's state, so a server found down stays out
// of rotation through a swap instead of counting as healthy until the new
// checker's first result. A state lives while a generation holds it. The
// zero value is ready; safe for concurrent use.
type HealthStates struct {
	s shared[*healthState]
}

// healthState is one server's health; without a holder it is forgotten at
// once (a server that comes back later starts healthy).
type healthState struct{ healthy atomic.Bool }

func (*healthState) idle() bool { return true }

// Acquire returns the state of key (healthy when new) and the function that
// releases this holder's reference.
func (h *HealthStates) Acquire(key string) (*atomic.Bool, func()) {
	st, release := h.s.acquire(key, func() *healthState {
		st := &healthState{}
		st.healthy.Store(true)
		return st
	})
	return &st.healthy, release
}

// wrr is smooth weighted round robin precomputed into a sequence; Pick
// walks it with an atomic counter and skips entries rejected by ok.
type wrr[T any] struct {
	seq  []T
	next atomic.Uint64
}

// newWRR expands items by weight into nginx's smooth order; weight 0
// leaves an item out.
func newWRR[T any](items []T, weight func(T) int) *wrr[T] {
	type st struct {
		it     T
		w, cur int
	}
	var ss []*st
	total := 0
	for _, it := range items {
		if w := weight(it); w > 0 {
			ss = append(ss, &st{it: it, w: w})
			total += w
		}
	}
	w := &wrr[T]{}
	if total > 4096 { // keep the sequence bounded; proportions stay close
		for _, s := range ss {
			s.w = max(1, s.w*4096/total)
		}
		total = 0
		for _, s := range ss {
			total += s.w
		}
	}
	for range total {
		var best *st
		for _, s := range ss {
			s.cur += s.w
			if best == nil || s.cur > best.cur {
				best = s
			}
		}
		best.cur -= total
		w.seq = append(w.seq, best.it)
	}
	return w
}

// pick returns the next item ok accepts, trying each entry at most once.
func (w *wrr[T]) pick(ok func(T) bool) (T, bool) {
	var zero T
	n := uint64(len(w.seq))
	if n == 0 {
		return zero, false
	}
	start := w.next.Add(1) - 1
	for i := range n {
		it := w.seq[(start+i)%n]
		if ok(it) {
			return it, true
		}
	}
	return zero, false
}

// ErrNoServer: the service has no available server.
var ErrNoServer = errors.New("no available server")

// LoadBalancer is a loadBalancer TCP service.
type LoadBalancer struct {
	name      string
	transport *Transport
	servers   *wrr[*Server]
	log       *slog.Logger
	// dialCtx is the generation's context without its cancellation: dials
	// are bounded by the dial timeout, not by the generation, so a
	// connection in flight during a swap still reaches its server.
	dialCtx context.Context
}

// NewLoadBalancer balances over servers with t. ctx gives dials its values.
func NewLoadBalancer(ctx context.Context, name string, servers []*Server, t *Transport, log *slog.Logger) *LoadBalancer {
	return &LoadBalancer{name: name, transport: t, servers: newWRR(servers, func(s *Server) int { return s.Weight }), log: log, dialCtx: context.WithoutCancel(ctx)}
}

// ServeTCP dials the next healthy server (trying each once) and forwards c
// to it; the server socket's keep-alive is set once the connection has
// lived keepAliveDelay (armKeepAlive). A Postgres client whose TLS Gantry
// acknowledged gets the SSLRequest replayed to the server first
// (passthrough of Postgres STARTTLS, Traefik postgres.go).
func (lb *LoadBalancer) ServeTCP(c *tcpmux.Conn) {
	var triedBuf [4]*Server // the servers dialed so far (most services have few)
	tried := triedBuf[:0]
	for {
		s, ok := lb.servers.pick(func(s *Server) bool { return s.Healthy() && !slices.Contains(tried, s) })
		if !ok {
			lb.log.Debug("tcp: no server available", "service", lb.name)
			_ = c.Close()
			return
		}
		tried = append(tried, s)
		up, raw, err := lb.transport.dial(lb.dialCtx, s, c)
		if err != nil {
			lb.log.Debug("tcp: dial failed", "service", lb.name, "server", s.Address, "error", err)
			continue
		}
		ka := lb.transport.armKeepAlive(raw)
		defer ka.stop() // once: both ways on return
		if c.Postgres {
			if err := replayPostgres(up); err != nil {
				lb.log.Debug("tcp: postgres starttls towards server failed", "service", lb.name, "server", s.Address, "error", err)
				_ = up.Close()
				_ = c.Close()
				return
			}
		}
		Forward(c, up, lb.transport.TerminationDelay, lb.log)
		return
	}
}

// replayPostgres sends the SSLRequest on up and expects the one-byte 'S'.
func replayPostgres(up net.Conn) error {
	if _, err := up.Write(postgresSSLRequest); err != nil {
		return err
	}
	_ = up.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer up.SetReadDeadline(time.Time{})
	var b [1]byte
	if _, err := up.Read(b[:]); err != nil {
		return err
	}
	if b[0] != 'S' {
		return errPostgresRefused
	}
	return nil
}

// Weighted is a weighted TCP service over other services.
type Weighted struct {
	children *wrr[tcpmux.Handler]
}

// WeightedChild is one child of a Weighted service.
type WeightedChild struct {
	Handler tcpmux.Handler
	Weight  int
}

// NewWeighted builds a weighted service.
func NewWeighted(children []WeightedChild) *Weighted {
	hs := make([]tcpmux.Handler, 0, len(children))
	weights := map[tcpmux.Handler]int{}
	for _, c := range children {
		hs = append(hs, c.Handler)
		weights[c.Handler] += c.Weight
	}
	return &Weighted{children: newWRR(hs, func(h tcpmux.Handler) int { return weights[h] })}
}

// ServeTCP hands c to the next child.
func (w *Weighted) ServeTCP(c *tcpmux.Conn) {
	h, ok := w.children.pick(func(tcpmux.Handler) bool { return true })
	if !ok {
		_ = c.Close()
		return
	}
	h.ServeTCP(c)
}

// Checker runs a TCP health check for servers: connect (to Port when set),
// write Send, expect the reply to start with Expect, each attempt bounded by
// Timeout; every Interval (UnhealthyInterval while down). Traefik 3.6's TCP
// health check (pkg/healthcheck, tcp.go).
type Checker struct {
	Port              string
	Send, Expect      string
	Interval          time.Duration
	UnhealthyInterval time.Duration
	Timeout           time.Duration
}

// Run checks s until ctx ends. The first check runs at once.
func (hc *Checker) Run(ctx context.Context, s *Server, log *slog.Logger) {
	for {
		ok := hc.check(ctx, s) == nil
		if ok != s.healthy.Swap(ok) {
			log.Info("tcp server health changed", "server", s.Address, "healthy", ok)
		}
		d := hc.Interval
		if !ok {
			d = hc.UnhealthyInterval
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (hc *Checker) check(ctx context.Context, s *Server) error {
	addr := s.Address
	if hc.Port != "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return err
		}
		addr = net.JoinHostPort(host, hc.Port)
	}
	cctx, cancel := context.WithTimeout(ctx, hc.Timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(cctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	dl, _ := cctx.Deadline()
	_ = c.SetDeadline(dl)
	if hc.Send != "" {
		if _, err := c.Write([]byte(hc.Send)); err != nil {
			return err
		}
	}
	if hc.Expect == "" {
		return nil
	}
	buf := make([]byte, len(hc.Expect))
	if _, err := ioReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != hc.Expect {
		return errors.New("unexpected health check reply")
	}
	return nil
}

// Group owns checker goroutines; Close stops and joins them.
type Group struct {
	cancel context.CancelFunc
	ctx    context.Context
	wg     sync.WaitGroup
}

// NewGroup returns a Group bounded by ctx.
func NewGroup(ctx context.Context) *Group {
	g := &Group{}
	g.ctx, g.cancel = context.WithCancel(ctx)
	return g
}

// Go runs f(ctx) in the group.
func (g *Group) Go(f func(ctx context.Context)) { g.wg.Go(func() { f(g.ctx) }) }

// Close stops every goroutine and waits for them.
func (g *Group) Close() {
	g.cancel()
	g.wg.Wait()
}

// WeightedAddr is an address with a weight, for AddrWRR.
type WeightedAddr struct {
	Addr   string
	Weight int
}

// AddrWRR is smooth weighted round robin over addresses (UDP sessions).
type AddrWRR struct{ w *wrr[string] }

// NewAddrWRR builds an AddrWRR; weight 0 leaves an address out.
func NewAddrWRR(addrs []WeightedAddr) *AddrWRR {
	weights := map[string]int{}
	var list []string
	for _, a := range addrs {
		if _, ok := weights[a.Addr]; !ok {
			list = append(list, a.Addr)
		}
		weights[a.Addr] += a.Weight
	}
	return &AddrWRR{w: newWRR(list, func(s string) int { return weights[s] })}
}

// Pick returns the next address; false when there is none.
func (a *AddrWRR) Pick() (string, bool) { return a.w.pick(func(string) bool { return true }) }

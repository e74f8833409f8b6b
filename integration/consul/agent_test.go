package consul

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/integration/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// agentReadyTimeout bounds how long a -dev agent may take to elect itself.
const agentReadyTimeout = 60 * time.Second

// agent is a real Consul agent in -dev mode (in-memory state) on loopback.
// Stop and Start keep its ports, so clients see the same address come back
// with an empty catalog, as after a crash of a dev agent.
type agent struct {
	bin   string
	ports [4]int // http, serf lan, serf wan, server
	Addr  string // "127.0.0.1:<http port>"
	API   *api.Client

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *harness.SyncBuffer
	done chan struct{}
}

// startAgent starts an agent on free ports and stops it when t ends; its
// log goes into the test log when t failed.
func startAgent(t testing.TB) *agent {
	t.Helper()
	a := &agent{bin: harness.ConsulBin(t)}
	a.ports = [4]int{harness.FreePort(t), harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)}
	a.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(a.ports[0]))
	cfg := api.DefaultConfig()
	cfg.Address = a.Addr
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a.API = c
	t.Cleanup(func() {
		a.Stop(t)
		if t.Failed() {
			t.Logf("consul agent output:\n%s", a.out.String())
		}
	})
	a.Start(t)
	return a
}

// Start runs the agent and waits until it has a leader and its own node is
// in the catalog.
func (a *agent) Start(t testing.TB) {
	t.Helper()
	a.mu.Lock()
	if a.cmd != nil {
		a.mu.Unlock()
		t.Fatal("consul agent already running")
	}
	if a.out == nil {
		a.out = &harness.SyncBuffer{}
	}
	cmd := exec.Command(a.bin, harness.ConsulDevArgs("gantry-test", a.ports)...)
	cmd.Stdout, cmd.Stderr = a.out, a.out
	if err := cmd.Start(); err != nil {
		a.mu.Unlock()
		t.Fatalf("start consul agent: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	a.cmd, a.done = cmd, done
	a.mu.Unlock()

	harness.Try(t, agentReadyTimeout, func() error {
		select {
		case <-done:
			return harness.Permanent(fmt.Errorf("consul agent exited:\n%s", a.out.String()))
		default:
		}
		leader, err := a.API.Status().Leader()
		if err != nil {
			return err
		}
		if leader == "" {
			return errors.New("no leader yet")
		}
		nodes, _, err := a.API.Catalog().Nodes(nil)
		if err != nil {
			return err
		}
		if len(nodes) == 0 {
			return errors.New("own node not in the catalog yet")
		}
		return nil
	})
}

// Stop terminates the agent (SIGTERM, then SIGKILL after 15 s) and waits
// for it to exit. Stopping a stopped agent does nothing.
func (a *agent) Stop(t testing.TB) {
	t.Helper()
	a.mu.Lock()
	cmd, done := a.cmd, a.done
	a.cmd = nil
	a.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// registerOpts describes one service instance to register with the agent.
type registerOpts struct {
	id, name string
	addr     string
	port     int
	tags     []string
	// ttl, when set, attaches a TTL check "service:<id>" in status passing,
	// which the test drives with setStatus.
	ttl bool
}

func (a *agent) register(t testing.TB, o registerOpts) {
	t.Helper()
	reg := &api.AgentServiceRegistration{ID: o.id, Name: o.name, Address: o.addr, Port: o.port, Tags: o.tags}
	if o.ttl {
		reg.Check = &api.AgentServiceCheck{TTL: "10m", Status: api.HealthPassing}
	}
	if err := a.API.Agent().ServiceRegister(reg); err != nil {
		t.Fatalf("register %s: %v", o.id, err)
	}
}

func (a *agent) deregister(t testing.TB, id string) {
	t.Helper()
	if err := a.API.Agent().ServiceDeregister(id); err != nil {
		t.Fatalf("deregister %s: %v", id, err)
	}
}

// setStatus sets the TTL check of service id to passing, warning or critical.
func (a *agent) setStatus(t testing.TB, id, status string) {
	t.Helper()
	if err := a.API.Agent().UpdateTTL("service:"+id, "set by test", status); err != nil {
		t.Fatalf("set %s %s: %v", id, status, err)
	}
}

func (a *agent) put(t testing.TB, kv map[string]string) {
	t.Helper()
	for k, v := range kv {
		if _, err := a.API.KV().Put(&api.KVPair{Key: k, Value: []byte(v)}, nil); err != nil {
			t.Fatalf("kv put %s: %v", k, err)
		}
	}
}

func (a *agent) deleteTree(t testing.TB, prefix string) {
	t.Helper()
	if _, err := a.API.KV().DeleteTree(prefix, nil); err != nil {
		t.Fatalf("kv delete %s: %v", prefix, err)
	}
}

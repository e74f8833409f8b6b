package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/client"
	"golang.org/x/sys/unix"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// engine is a dockerd started by the tests, with everything it owns under
// dir: data (--data-root), exec (--exec-root), run/docker.sock (the API
// socket, in a directory of its own so that containers can bind-mount the
// directory and see the socket again after a daemon restart).
type engine struct {
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	logf *os.File
	cli  *client.Client
}

func (e *engine) runDir() string { return filepath.Join(e.dir, "run") }
func (e *engine) host() string   { return "unix://" + filepath.Join(e.runDir(), "docker.sock") }

// start launches dockerd and waits until it answers (at most 60s).
// --bridge none and --iptables=false keep the host's network untouched:
// tests use a user-defined bridge network, and published ports go through
// docker-proxy on 127.0.0.1. --live-restore keeps containers running while
// the daemon is stopped (the outage test).
func (e *engine) start() error {
	for _, d := range []string{"data", "exec", "run"} {
		if err := os.MkdirAll(filepath.Join(e.dir, d), 0o755); err != nil {
			return err
		}
	}
	if e.logf == nil {
		f, err := os.Create(filepath.Join(e.dir, "dockerd.log"))
		if err != nil {
			return err
		}
		e.logf = f
	}
	cmd := exec.Command("dockerd",
		"--data-root", filepath.Join(e.dir, "data"),
		"--exec-root", filepath.Join(e.dir, "exec"),
		"--pidfile", filepath.Join(e.dir, "dockerd.pid"),
		"--host", e.host(),
		"--bridge", "none",
		"--iptables=false",
		"--live-restore",
		"--shutdown-timeout", "2",
		"--log-level", "warn",
		// Networks come from a pool of the suite's own, so bridges left on
		// the host by a dockerd that was killed (they outlive it) never
		// exhaust Docker's default pools, and can be cleared (clearStaleBridges).
		"--default-address-pool", "base="+testAddressPool+",size=24",
	)
	clearStaleBridges()
	cmd.Stdout, cmd.Stderr = e.logf, e.logf
	// Stop dockerd if the test binary dies without cleaning up; started
	// from a thread kept for dockerd's lifetime, as Pdeathsig needs (the
	// tests end threads on purpose: dialInNetns).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	exited, err := harness.StartOnOwnThread(cmd)
	if err != nil {
		return fmt.Errorf("start dockerd: %w", err)
	}
	e.cmd, e.done = cmd, make(chan struct{})
	go func() { <-exited; close(e.done) }()
	if e.cli == nil {
		cli, err := client.NewClientWithOpts(client.WithHost(e.host()), client.WithAPIVersionNegotiation())
		if err != nil {
			return err
		}
		e.cli = cli
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := e.cli.Ping(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-e.done:
			return fmt.Errorf("dockerd exited at start: %v\n%s", cmd.ProcessState, e.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd not answering after 60s: %w\n%s", err, e.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// testAddressPool is the suite's dockerd address pool (10.213.0.0/16 in
// /24 networks): 256 networks, none of Docker's defaults.
const testAddressPool = "10.213.0.0/16"

// clearStaleBridges deletes the host's br-* interfaces whose address is in
// testAddressPool: a dockerd that was killed leaves its bridges behind,
// and only a suite's dockerd uses this pool. Errors are ignored (another
// run's bridge may be in use; the pool has room for it).
func clearStaleBridges() {
	_, pool, err := net.ParseCIDR(testAddressPool)
	if err != nil {
		return
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return
	}
	for _, ifc := range ifs {
		if !strings.HasPrefix(ifc.Name, "br-") || ifc.Flags&net.FlagUp != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && pool.Contains(ipn.IP) {
				_ = exec.Command("ip", "link", "delete", ifc.Name).Run()
				break
			}
		}
	}
}

// stop sends SIGTERM and waits for dockerd to exit (SIGKILL after 30s).
func (e *engine) stop() error {
	if e.cmd == nil {
		return nil
	}
	defer func() { e.cmd = nil }()
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
		return nil
	case <-time.After(30 * time.Second):
		e.cmd.Process.Kill()
		<-e.done
		return errors.New("dockerd did not stop within 30s; killed")
	}
}

// unmountAll detaches every mount below e.dir (dockerd mounts its data
// root and network namespaces there), deepest first, so the directory can be
// removed.
func (e *engine) unmountAll() error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == e.dir || strings.HasPrefix(f[4], e.dir+"/")) {
			points = append(points, f[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func (e *engine) logTail() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "dockerd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// docker runs the docker CLI against the engine and returns its stdout.
func (e *engine) docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+e.host())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %v: %w\n%s", args, err, errb.String())
	}
	return out.String(), nil
}

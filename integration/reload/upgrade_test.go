package reload

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// upgradeGrace is the web entrypoint's graceTimeOut in the upgrade test.
const upgradeGrace = 5 * time.Second

// installBinary copies src to dst the way a package manager installs a new
// version: write aside, then rename over (the running process keeps its
// old inode).
func installBinary(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// proc is one gantry process of an upgrade test, held by a pidfd taken
// while it is known to run: the first by the test that started it, a
// successor as soon as the upgrade's log line names its pid. Signals go to
// that process or fail; never to another that got the same pid later.
// pid_max is 32 768 on this kind of machine and go test forks without
// end, so pids come round again within minutes: a SIGKILL sent at cleanup
// to the pid of a gantry that had exited long before killed the dockerd of
// the integration/docker tests running at the same time.
type proc struct {
	pid int
	fd  int
}

// track opens a pidfd for pid; when t ends, the process is stopped
// (stopAll) and then the pidfd closed, in one cleanup: with the close a
// cleanup of its own, registered after the test's cleanup that stopped
// its processes, it ran first (cleanups run last-registered first), and
// the stop's signals to every successor failed on the closed descriptor:
// the last upgraded gantry of each run was left running.
func track(t *testing.T, pid int) *proc {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	p := &proc{pid: pid, fd: fd}
	t.Cleanup(func() {
		stopAll([]*proc{p})
		unix.Close(fd)
	})
	return p
}

// signal sends sig to the process (an error once it has exited).
func (p *proc) signal(sig syscall.Signal) error {
	return unix.PidfdSendSignal(p.fd, sig, nil, 0)
}

// alive reports whether the process has not exited (its pidfd becomes
// readable when it does).
func (p *proc) alive() bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// stopAll sends SIGTERM to every process still running, waits up to
// harness.StopTimeout for them to exit, then kills those left.
func stopAll(ps []*proc) {
	for _, p := range ps {
		_ = p.signal(syscall.SIGTERM)
	}
	_ = harness.Poll(harness.StopTimeout, func() error {
		for _, p := range ps {
			if p.alive() {
				return fmt.Errorf("%d still running", p.pid)
			}
		}
		return nil
	})
	for _, p := range ps {
		_ = p.signal(syscall.SIGKILL)
	}
}

// TestBinaryUpgradeUnderLoad is issue 18's binary upgrade through the real
// binary: a new binary that exits at once fails the upgrade and the old
// process keeps serving; then, under load (keep-alive and a new connection
// per request, 500 req/s each), SIGUSR2 starts the installed binary on the
// inherited sockets (TCP and a UDP entrypoint): zero failed requests, the
// old process exits after draining, the new one (another pid) serves
// afterwards and can itself be upgraded again.
func TestBinaryUpgradeUnderLoad(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "a"))
	// A UDP entrypoint too: its socket is handed over as well.
	echo := udpEcho(t)
	harness.WriteFile(t, dyn, "udp.yml", fmt.Sprintf("udp:\n  routers:\n    echo:\n      entryPoints: [dns]\n      service: echo\n"+
		"  services:\n    echo:\n      loadBalancer:\n        servers:\n          - address: %q\n", echo))
	web, dns := harness.FreeAddr(t), harness.FreeAddr(t)
	static := strings.Replace(staticConfig(web, dyn, filepath.Join(work, "gantry.db"), "20ms"), fmt.Sprintf("address: %q\n", web),
		fmt.Sprintf("address: %q\n    transport:\n      lifeCycle:\n        graceTimeOut: %s\n  dns:\n    address: %q\n", web, upgradeGrace, dns+"/udp"), 1)
	cfg := filepath.Join(work, "gantry.yml")
	if err := os.WriteFile(cfg, []byte(static), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "bin", "gantry")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	installBinary(t, harness.GantryBin(t), bin)

	// Started here, not by the harness: the new process inherits stdout
	// and stderr, so they go to a file (a pipe would keep the harness
	// waiting for the new process too).
	logPath := filepath.Join(work, "gantry.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	output := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	old := exec.Command(bin, "--configFile="+cfg)
	old.Dir, old.Stdout, old.Stderr = work, logf, logf
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	oldDone := make(chan struct{})
	go func() { _ = old.Wait(); close(oldDone) }()
	track(t, old.Process.Pid)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- gantry output ---\n%s--- end ---", output())
		}
	})
	url := "http://" + web + "/"
	harness.TryGet(t, pollTimeout, url, harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	waitLog := func(substr string, n int) {
		t.Helper()
		harness.Try(t, pollTimeout, func() error {
			if c := strings.Count(output(), substr); c < n {
				return fmt.Errorf("%q logged %d times, want %d", substr, c, n)
			}
			return nil
		})
	}
	waitLog("config applied", 1)
	harness.Try(t, pollTimeout, func() error { return udpAsk(dns, "before") })

	// 1. A new binary that exits at once: the upgrade fails, the old
	// process keeps serving and says why.
	broken := filepath.Join(work, "broken")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	installBinary(t, broken, bin)
	if err := old.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitLog("upgrade failed; this process keeps serving", 1)
	if out := output(); !strings.Contains(out, "exit status 3") {
		t.Errorf("the failure does not say the new process exited with status 3:\n%s", out)
	}
	for range 20 {
		harness.TryGet(t, pollTimeout, url, harness.Host("a.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	}
	// The store was given back: a new configuration is applied and saved.
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "a", "b"))
	harness.TryGet(t, pollTimeout, url, harness.Host("b.test"), harness.StatusIs(200))
	waitLog("config applied", 2)
	if out := output(); strings.Contains(out, "database not open") {
		t.Errorf("the store stayed closed after the failed upgrade:\n%s", out)
	}

	// 2. The real new binary, under load.
	installBinary(t, harness.GantryBin(t), bin)
	ctx := context.Background()
	var wg sync.WaitGroup
	var keep, fresh loadResult
	const loadFor = 5 * time.Second
	wg.Go(func() { keep = runLoad(ctx, url, "a.test", loadFor, true) })
	wg.Go(func() { fresh = runLoad(ctx, url, "a.test", loadFor, false) })
	time.Sleep(time.Second)
	if err := old.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitLog("upgrade: new process serves; draining", 1)
	m := regexp.MustCompile(`new process serves; draining" pid=(\d+)`).FindStringSubmatch(output())
	if m == nil {
		t.Fatalf("no pid in the upgrade log line")
	}
	newPid, _ := strconv.Atoi(m[1])
	second := track(t, newPid)
	select {
	case <-oldDone:
	case <-time.After(upgradeGrace + 10*time.Second):
		t.Fatalf("the old process still runs %v after the upgrade", upgradeGrace+10*time.Second)
	}
	wg.Wait()
	t.Logf("keep-alive: %v", keep)
	t.Logf("new connections: %v", fresh)
	for name, r := range map[string]loadResult{"keep-alive": keep, "new connections": fresh} {
		if r.failed != 0 || r.sent == 0 {
			t.Errorf("%s: %d of %d requests failed: %q", name, r.failed, r.sent, r.firstErrs)
		}
	}
	if code := old.ProcessState.ExitCode(); code != 0 {
		t.Errorf("old process exit code %d, want 0", code)
	}
	if newPid == old.Process.Pid || !second.alive() {
		t.Fatalf("new process %d is not running (old was %d)", newPid, old.Process.Pid)
	}
	out := output()
	for _, want := range []string{"upgrade: serving on inherited sockets", "upgrade: serving on the inherited socket\" entrypoint=dns", "upgrade: serving; the old process drains", "gantry stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	// Only the new process is left to answer, on TCP and UDP.
	harness.Try(t, pollTimeout, func() error { return udpAsk(dns, "after") })
	for range 20 {
		harness.TryGet(t, pollTimeout, url, harness.Host("b.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	}
	// The new process owns the store: a change is applied and saved.
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "a", "b", "c"))
	harness.TryGet(t, pollTimeout, url, harness.Host("c.test"), harness.StatusIs(200))
	waitLog("config applied", 3)

	// 3. The new process upgrades again (its environment and descriptors
	// were left clean): a third process serves, the second exits.
	if err := second.signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitLog("upgrade: new process serves; draining", 2)
	all := regexp.MustCompile(`new process serves; draining" pid=(\d+)`).FindAllStringSubmatch(output(), -1)
	thirdPid, _ := strconv.Atoi(all[len(all)-1][1])
	third := track(t, thirdPid)
	if err := harness.Poll(upgradeGrace+10*time.Second, func() error {
		if second.alive() {
			return fmt.Errorf("second process %d still running", newPid)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if thirdPid == newPid || !third.alive() {
		t.Fatalf("third process %d is not running", thirdPid)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("c.test"), harness.StatusIs(200), harness.BodyContains("Name: w1"))
	harness.Try(t, pollTimeout, func() error { return udpAsk(dns, "third") })
}

// udpEcho serves a UDP echo on a loopback port until the test ends and
// returns its address.
func udpEcho(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String()
}

// udpAsk sends msg to addr from a new socket and wants it echoed.
func udpAsk(addr, msg string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return fmt.Errorf("udp %s: %w", addr, err)
	}
	if string(buf[:n]) != msg {
		return fmt.Errorf("udp echo %q, want %q", buf[:n], msg)
	}
	return nil
}

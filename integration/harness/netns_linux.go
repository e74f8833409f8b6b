package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// Environment of a test binary re-executed by MainNetns inside its own
// network namespace.
const (
	netnsEnv = "GANTRY_HARNESS_NETNS"    // "1" inside the namespace
	binsEnv  = "GANTRY_HARNESS_PREBUILT" // JSON {package: binary path}
)

// MainNetns is Main for suites whose backends need non-loopback addresses
// (the Kubernetes API server refuses 127.0.0.0/8 in EndpointSlices). Run
// as root on Linux, it builds the gantry and whoami binaries (plus the
// packages in extra, import paths of module github.com/gantry-proxy/gantry),
// then re-executes the test binary in a new network namespace
// (CLONE_NEWNET, as `unshare -n`), where it brings lo up and adds
// 10.244.0.1 to 10.244.0.<PodIPs> (/32) to it. Nothing in the namespace
// can reach the outside, and the suite's ports are its own: suites of
// other packages running at the same time cannot take them.
//
// Without root, or when the namespace cannot be made, the suite runs on
// the host as with Main, and PodIP is MissingTool (it names the reason).
// The re-executed child is killed if this process dies.
func MainNetns(m *testing.M, extra ...string) {
	if os.Getenv(netnsEnv) == "1" {
		os.Exit(runInNetns(m))
	}
	if reason := netnsUnavailable(); reason != "" {
		netnsReason = reason
		Main(m)
		return
	}
	os.Exit(reexecInNetns(m, append([]string{gantryPkg, whoamiPkg}, extra...)))
}

// netnsUnavailable says why a network namespace cannot be made here ("" when
// it can).
func netnsUnavailable() string {
	if os.Geteuid() != 0 {
		return "not root: cannot create a network namespace for the pod addresses"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip command (iproute2) to configure the network namespace"
	}
	return ""
}

// reexecInNetns builds pkgs, runs this test binary again in a new network
// namespace and returns its exit code.
func reexecInNetns(m *testing.M, pkgs []string) int {
	paths := map[string]string{}
	binMu.Lock()
	for _, pkg := range pkgs {
		p, err := build(pkg)
		if err != nil {
			binMu.Unlock()
			fmt.Fprintf(os.Stderr, "harness: %v\n", err)
			return 1
		}
		paths[pkg] = p
	}
	binMu.Unlock()
	defer func() {
		binMu.Lock()
		if binDir != "" {
			os.RemoveAll(binDir)
		}
		binMu.Unlock()
	}()
	js, _ := json.Marshal(paths)
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness: locate the test binary: %v\n", err)
		return 1
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1", binsEnv+"="+string(js))
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		// No namespace after all (e.g. a container without CAP_SYS_ADMIN):
		// run on the host, PodIP says why.
		netnsReason = fmt.Sprintf("create a network namespace: %v", err)
		return m.Run()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	signal.Stop(sigs)
	if err != nil && cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "harness: test binary in network namespace: %v\n", err)
		return 1
	}
	return cmd.ProcessState.ExitCode()
}

// runInNetns configures the namespace this process was started in, then
// runs the tests with the binaries its parent built.
func runInNetns(m *testing.M) int {
	js := os.Getenv(binsEnv)
	// Not inherited by the processes the tests start (gantry would warn
	// about unknown GANTRY_* options).
	os.Unsetenv(binsEnv)
	os.Unsetenv(netnsEnv)
	if js != "" {
		var paths map[string]string
		if err := json.Unmarshal([]byte(js), &paths); err != nil {
			fmt.Fprintf(os.Stderr, "harness: %s: %v\n", binsEnv, err)
			return 1
		}
		binMu.Lock()
		built = paths
		binMu.Unlock()
	}
	cmds := [][]string{{"link", "set", "lo", "up"}}
	for i := 1; i <= PodIPs; i++ {
		cmds = append(cmds, []string{"addr", "add", fmt.Sprintf("10.244.0.%d/32", i), "dev", "lo"})
	}
	for _, c := range cmds {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "harness: ip %v: %v\n%s", c, err, out)
			return 1
		}
	}
	inNetns = true
	return m.Run()
}

// deathSignal makes a child process get SIGKILL when the thread that
// started it (so, in practice, the test process) dies.
func deathSignal() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StopTimeout bounds how long Stop and the cleanup wait for a process to
// exit after SIGTERM before killing it.
const StopTimeout = 15 * time.Second

// Process is a running child process whose output is captured.
type Process struct {
	Name string // for logs: "gantry", "whoami w1"
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid after done
}

// SyncBuffer is a goroutine-safe output sink (a process's output, a
// logger's): Write from any goroutine, String for what was written so far.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartProcess starts bin with args in dir, with env ("KEY=value") added to
// the environment, capturing its output. It is stopped when the test ends
// (SIGTERM, then kill after StopTimeout) and its output is dumped into the
// test log if the test failed.
func StartProcess(t testing.TB, name, dir, bin string, args, env []string) *Process {
	t.Helper()
	return startProcess(t, name, dir, bin, args, env)
}

// startProcess is StartProcess.
func startProcess(t testing.TB, name, dir, bin string, args, env []string) *Process {
	t.Helper()
	return startProcessAttr(t, name, dir, bin, args, env, nil)
}

// startProcessAttr is startProcess with attrs for the child (nil: none).
func startProcessAttr(t testing.TB, name, dir, bin string, args, env []string, attr *syscall.SysProcAttr) *Process {
	t.Helper()
	p := &Process{Name: name, out: &SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.SysProcAttr = attr
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	exited, err := StartOnOwnThread(p.cmd)
	if err != nil {
		t.Fatalf("harness: start %s: %v", name, err)
	}
	go func() {
		p.err = <-exited
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- output of %s (%s %s) ---\n%s--- end of %s ---", name, filepath.Base(bin), strings.Join(args, " "), p.Output(), name)
		}
	})
	return p
}

// Output returns everything the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.out.String() }

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process. Signalling an exited process is not an
// error.
func (p *Process) Signal(sig os.Signal) error {
	err := p.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Exited returns a channel closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitCode returns the exit code once the process has exited (-1 when it
// was killed by a signal), and false while it still runs.
func (p *Process) ExitCode() (int, bool) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), true
	default:
		return 0, false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// code; it fails t when the process is still running at the deadline.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("harness: %s still running after %v", p.Name, timeout)
		return 0
	}
}

// Stop sends SIGTERM and waits for the exit (killing the process after
// StopTimeout). It returns the exit code, -1 when killed.
func (p *Process) Stop(t testing.TB) int {
	t.Helper()
	p.stop()
	return p.cmd.ProcessState.ExitCode()
}

func (p *Process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(StopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// WaitOutput polls the output until it contains substr, failing t after
// timeout. It returns the output at that moment.
func (p *Process) WaitOutput(t testing.TB, timeout time.Duration, substr string) string {
	t.Helper()
	var out string
	Try(t, timeout, func() error {
		out = p.Output()
		if strings.Contains(out, substr) {
			return nil
		}
		select {
		case <-p.done:
			return Permanent(fmt.Errorf("%s exited (%v) before writing %q", p.Name, p.err, substr))
		default:
		}
		return fmt.Errorf("%s has not written %q yet", p.Name, substr)
	})
	return out
}

// CountOutput returns how many times substr occurs in the output so far.
func (p *Process) CountOutput(substr string) int {
	return strings.Count(p.Output(), substr)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/dataplane/handoff"
)

// upgradeReadyTimeout bounds the wait for the new binary to serve after
// SIGUSR2; past it the new process is killed and the old one keeps serving.
const upgradeReadyTimeout = 30 * time.Second

// upgrader runs the binary upgrade (SIGUSR2): the executable found at exe
// now (the new binary installed over the old one) is started with this
// process's arguments and environment and given every listening socket
// (package handoff); once it reports that it serves, the caller drains.
type upgrader struct {
	log     *slog.Logger
	exe     string                           // resolved at start (os.Executable)
	sockets func() ([]handoff.Socket, error) // every listening socket (instance.Sockets)
	// store is released for the new process (bbolt holds a file lock) and
	// taken back when the upgrade fails.
	store interface {
		Suspend() error
		Resume() error
	}
	timeout time.Duration
}

// run starts the new process and waits until it is ready (nil, its pid),
// fails (exits, or is not ready within u.timeout, or ctx ends: it is then
// killed) or cannot be started; on failure the store is reopened and the
// error says why.
func (u *upgrader) run(ctx context.Context) (int, error) {
	var socks []handoff.Socket
	defer func() {
		for _, s := range socks {
			_ = s.File.Close()
		}
	}()
	socks, err := u.sockets()
	if err != nil {
		return 0, fmt.Errorf("duplicate the listening sockets: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("readiness pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(u.exe, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = upgradeEnv(os.Environ(), socks, len(socks)+3)
	for _, s := range socks {
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.File)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	if err := u.store.Suspend(); err != nil {
		w.Close()
		return 0, err
	}
	err = cmd.Start()
	w.Close() // the child holds the write end: EOF when it exits unready
	if err != nil {
		return 0, errors.Join(fmt.Errorf("start %s: %w", u.exe, err), u.resume())
	}
	pid := cmd.Process.Pid
	u.log.Info("upgrade: new process started; waiting for it to serve", "pid", pid, "executable", u.exe, "sockets", len(socks))
	ready := make(chan error, 1)
	_ = r.SetReadDeadline(time.Now().Add(u.timeout))
	go func() { // ends at the read deadline at the latest
		var b [1]byte
		n, err := r.Read(b[:])
		if n == 1 {
			err = nil
		} else if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("it exited or closed the readiness pipe before serving")
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("not serving within %v", u.timeout)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-ctx.Done():
		_ = r.SetReadDeadline(time.Now())
		<-ready
		err = context.Cause(ctx)
	}
	if err == nil {
		_ = cmd.Process.Release() // it outlives this process
		return pid, nil
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return 0, errors.Join(fmt.Errorf("new process %d (%s): %w", pid, cmd.ProcessState, err), u.resume())
}

func (u *upgrader) resume() error {
	if err := u.store.Resume(); err != nil {
		return fmt.Errorf("the store stays closed (configuration changes are not saved): %w", err)
	}
	return nil
}

// upgradeEnv returns environ without the upgrade variables of an earlier
// upgrade, plus EnvFDs naming socks (passed from descriptor 3 on) and
// EnvReady naming readyFD.
func upgradeEnv(environ []string, socks []handoff.Socket, readyFD int) []string {
	out := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, handoff.EnvFDs+"=") && !strings.HasPrefix(kv, handoff.EnvReady+"=") {
			out = append(out, kv)
		}
	}
	var spec strings.Builder
	last := ""
	for i, s := range socks {
		switch {
		case s.Key == last:
			spec.WriteByte(',')
		case i > 0:
			spec.WriteByte(';')
			fallthrough
		default:
			spec.WriteString(s.Key + "=")
		}
		spec.WriteString(strconv.Itoa(3 + i))
		last = s.Key
	}
	return append(out, handoff.EnvFDs+"="+spec.String(), handoff.EnvReady+"="+strconv.Itoa(readyFD))
}

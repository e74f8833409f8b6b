package harness

import (
	"os/exec"
	"runtime"
)

// StartOnOwnThread starts cmd from an OS thread of its own, kept until cmd
// has exited, and waits for it there: the returned channel receives Wait's
// result once, when it exits. Use it for a cmd whose SysProcAttr sets
// Pdeathsig. The kernel sends Pdeathsig when the thread that started the
// child ends, not the process (go.dev/issue/27505), and a Go thread ends
// whenever a goroutine locked to it exits: integration/docker's
// dialInNetns ends its thread on purpose (it entered a container's network
// namespace), and when that was the thread that had started dockerd,
// dockerd got SIGTERM in the middle of the suite (logged by nothing at
// --log-level warn; seen in four clean-clone CI runs, always at the first
// test that dials into a container).
func StartOnOwnThread(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		// Locked, never unlocked: the thread lives while the goroutine
		// waits for cmd, and is discarded after.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

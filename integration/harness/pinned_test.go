package harness

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedExits ends n OS threads: goroutines that lock their thread and
// exit without unlocking, as integration/docker's dialInNetns does.
func lockedExits(n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { runtime.LockOSThread() })
	}
	wg.Wait()
}

// TestStartOnOwnThreadSurvivesThreadExits: a child with Pdeathsig started
// by StartOnOwnThread outlives any number of threads ending in the test
// process. (A child started plainly is killed when the thread that started
// it ends, go.dev/issue/27505; the runtime may run the starting goroutine
// on the main thread, which never ends, so that half is not asserted.)
func TestStartOnOwnThreadSurvivesThreadExits(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep (coreutils): %v", err)
	}
	pinned := exec.Command(sleep, "60")
	pinned.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited, err := StartOnOwnThread(pinned)
	if err != nil {
		t.Fatal(err)
	}
	lockedExits(500)
	select {
	case err := <-exited:
		t.Fatalf("the child started on its own thread ended when other threads did: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_ = pinned.Process.Kill()
	<-exited
}

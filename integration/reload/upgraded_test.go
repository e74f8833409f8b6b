package reload

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/integration/harness"
)

// Drain bounds of the upgraded-connection tests: a short graceTimeOut and
// a longer upgradedGraceTimeOut.
const (
	upGrace    = 1 * time.Second
	upUpgraded = 8 * time.Second
)

// upgradedStatic is a static configuration with entrypoint web at addr
// (graceTimeOut upGrace, upgradedGraceTimeOut upUpgraded) and extra
// indented under it.
func upgradedStatic(web, dyn, db, extra string) string {
	return fmt.Sprintf(`entryPoints:
  web:
    address: %q
    transport:
      lifeCycle:
        graceTimeOut: %s
        upgradedGraceTimeOut: %s
%sproviders:
  providersThrottleDuration: 20ms
  file:
    directory: %q
store:
  path: %q
log:
  level: INFO
`, web, upGrace, upUpgraded, extra, dyn, db)
}

// wsConn is a WebSocket to whoami's echo through gantry.
type wsConn struct{ c *websocket.Conn }

func dialEcho(t *testing.T, addr, host string) *wsConn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", http.Header{"Host": {host}})
	if err != nil {
		t.Fatalf("websocket dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &wsConn{c: c}
}

// echo sends msg and waits for it back.
func (w *wsConn) echo(msg string) error {
	deadline := time.Now().Add(10 * time.Second)
	_ = w.c.SetWriteDeadline(deadline)
	_ = w.c.SetReadDeadline(deadline)
	if err := w.c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	_, got, err := w.c.ReadMessage()
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if string(got) != msg {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}

// echoUntilClosed exchanges a message every 200 ms until the connection
// fails, for up to limit; it returns when it failed (zero if it never did)
// and how many echoes came back.
func (w *wsConn) echoUntilClosed(limit time.Duration) (closedAt time.Time, echoes int) {
	end := time.Now().Add(limit)
	for i := 0; time.Now().Before(end); i++ {
		if err := w.echo(fmt.Sprintf("drain %d", i)); err != nil {
			return time.Now(), echoes
		}
		echoes++
		time.Sleep(200 * time.Millisecond)
	}
	return time.Time{}, echoes
}

// Issue 23: a WebSocket open on an entrypoint whose settings change on a
// static reload was cut at graceTimeOut. It now keeps exchanging messages
// past graceTimeOut while the new settings serve new connections, and is
// closed at upgradedGraceTimeOut, not before.
func TestStaticReloadKeepsUpgradedConnections(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "ws"))
	web, db := harness.FreeAddr(t), filepath.Join(work, "gantry.db")
	g := harness.StartWith(t, harness.Options{Static: upgradedStatic(web, dyn, db, ""), Dir: work})
	url := "http://" + web + "/"
	harness.TryGet(t, pollTimeout, url, harness.Host("ws.test"), harness.StatusIs(200))
	ws := dialEcho(t, web, "ws.test")
	if err := ws.echo("before"); err != nil {
		t.Fatal(err)
	}

	changed := time.Now() // the old entrypoint's drain starts after this
	reloadStatic(t, g, upgradedStatic(web, dyn, db, "    forwardedHeaders:\n      insecure: true\n"), "entrypoint replaced; the old settings drain", 1)
	// New connections are served by the new settings meanwhile.
	harness.TryGet(t, pollTimeout, url, harness.Host("ws.test"), harness.Header("X-Forwarded-For", "203.0.113.7"),
		harness.StatusIs(200), harness.BodyContains("X-Forwarded-For: 203.0.113.7, 127.0.0.1"))
	time.Sleep(time.Until(changed.Add(upGrace + time.Second)))
	if err := ws.echo("after graceTimeOut"); err != nil {
		t.Fatalf("the WebSocket was cut within graceTimeOut of the reload (%v): %v", upGrace, err)
	}
	closedAt, echoes := ws.echoUntilClosed(upUpgraded + time.Minute)
	if closedAt.IsZero() {
		t.Fatalf("the WebSocket is still open %v after the reload (upgradedGraceTimeOut %v)", time.Since(changed), upUpgraded)
	}
	if d := closedAt.Sub(changed); d < upUpgraded {
		t.Errorf("the WebSocket closed %v after the reload, before upgradedGraceTimeOut (%v)", d, upUpgraded)
	}
	t.Logf("%d echoes during the drain; closed %v after the reload", echoes, closedAt.Sub(changed))
	// The line is logged before the close the client saw; it may still be
	// in the output pipe.
	g.WaitOutput(t, pollTimeout, "upgradedGraceTimeOut over; closing connections")
	if n := g.CountOutput("upgradedGraceTimeOut over; closing connections"); n != 1 {
		t.Errorf("the drain's end logged %d times, want 1", n)
	}
	harness.TryGet(t, pollTimeout, url, harness.Host("ws.test"), harness.StatusIs(200))
}

// Issue 23: across a binary upgrade (SIGUSR2) a WebSocket of the old
// process keeps exchanging messages past graceTimeOut while the new
// process serves new connections; it is closed at upgradedGraceTimeOut and
// the old process then exits 0. A shutdown (SIGTERM) of the new process
// still closes its WebSockets at graceTimeOut, not upgradedGraceTimeOut.
func TestBinaryUpgradeKeepsUpgradedConnections(t *testing.T) {
	w := harness.StartWhoamiProc(t, "w1")
	work := t.TempDir()
	dyn := filepath.Join(work, "dynamic")
	if err := os.Mkdir(dyn, 0o755); err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, dyn, "app.yml", whoamiConf(w.URL(), "ws"))
	web := harness.FreeAddr(t)
	cfg := filepath.Join(work, "gantry.yml")
	if err := os.WriteFile(cfg, []byte(upgradedStatic(web, dyn, filepath.Join(work, "gantry.db"), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "bin", "gantry")
	if err := os.Mkdir(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	installBinary(t, harness.GantryBin(t), bin)
	// Output to a file: the new process inherits it (see
	// TestBinaryUpgradeUnderLoad).
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
	waitLog := func(substr string, n int) {
		t.Helper()
		harness.Try(t, time.Minute, func() error {
			if c := strings.Count(output(), substr); c < n {
				return fmt.Errorf("%q logged %d times, want %d", substr, c, n)
			}
			return nil
		})
	}
	url := "http://" + web + "/"
	harness.TryGet(t, pollTimeout, url, harness.Host("ws.test"), harness.StatusIs(200))
	ws := dialEcho(t, web, "ws.test")
	if err := ws.echo("before"); err != nil {
		t.Fatal(err)
	}

	signalled := time.Now()
	if err := old.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitLog("upgrade: new process serves; draining", 1)
	m := regexp.MustCompile(`new process serves; draining" pid=(\d+)`).FindStringSubmatch(output())
	if m == nil {
		t.Fatal("no pid in the upgrade log line")
	}
	newPid, _ := strconv.Atoi(m[1])
	second := track(t, newPid)
	// The new process serves new connections, the old one drains.
	waitLog("upgrade: serving; the old process drains", 1)
	harness.TryGet(t, pollTimeout, url, harness.Host("ws.test"), harness.StatusIs(200))
	time.Sleep(time.Until(signalled.Add(upGrace + time.Second)))
	if err := ws.echo("after graceTimeOut"); err != nil {
		t.Fatalf("the WebSocket was cut within graceTimeOut of the upgrade (%v): %v", upGrace, err)
	}
	select {
	case <-oldDone:
		t.Fatal("the old process exited while its WebSocket was open, before upgradedGraceTimeOut")
	default:
	}
	closedAt, echoes := ws.echoUntilClosed(upUpgraded + time.Minute)
	if closedAt.IsZero() {
		t.Fatalf("the WebSocket is still open %v after SIGUSR2 (upgradedGraceTimeOut %v)", time.Since(signalled), upUpgraded)
	}
	if d := closedAt.Sub(signalled); d < upUpgraded {
		t.Errorf("the WebSocket closed %v after SIGUSR2, before upgradedGraceTimeOut (%v)", d, upUpgraded)
	}
	t.Logf("%d echoes during the drain; closed %v after SIGUSR2", echoes, closedAt.Sub(signalled))
	select {
	case <-oldDone:
	case <-time.After(time.Minute):
		t.Fatal("the old process still runs a minute after its WebSocket was closed")
	}
	if code := old.ProcessState.ExitCode(); code != 0 {
		t.Errorf("old process exit code %d, want 0", code)
	}
	if n := strings.Count(output(), "upgradedGraceTimeOut over; closing connections"); n != 1 {
		t.Errorf("the upgraded drain's end logged %d times, want 1 (the old process's)", n)
	}

	// SIGTERM of the new process: its WebSocket is closed at graceTimeOut
	// (a shutdown, no successor), not kept for upgradedGraceTimeOut.
	ws2 := dialEcho(t, web, "ws.test")
	if err := ws2.echo("on the new process"); err != nil {
		t.Fatal(err)
	}
	if err := second.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog("grace period over; closing connections", 1)
	if n := strings.Count(output(), "upgradedGraceTimeOut over; closing connections"); n != 1 {
		t.Errorf("the SIGTERM drain used upgradedGraceTimeOut (%d drain ends logged, want only the old process's)", n)
	}
	if closed, _ := ws2.echoUntilClosed(time.Minute); closed.IsZero() {
		t.Error("the new process's WebSocket is still open a minute after SIGTERM")
	}
	harness.Try(t, time.Minute, func() error {
		if second.alive() {
			return fmt.Errorf("new process %d still running after SIGTERM", newPid)
		}
		return nil
	})
}

package engineapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gantry-proxy/gantry/internal/capture"
)

// sshArgs are the arguments of ssh(1) reaching the engine of an
// ssh://[user@]host[:port][/socket/path] endpoint, as Docker's CLI
// connection helper builds them (and Traefik through it): ssh runs
// `docker system dial-stdio` on the remote host, which connects its
// standard input and output to the engine's socket (the remote default, or
// the endpoint's path). ConnectTimeout bounds the connection; -T asks for
// no terminal.
// Source: docker/cli cli/connhelper (ssh), Traefik v3 docker provider.
func sshArgs(u *url.URL) []string {
	args := []string{"-o", "ConnectTimeout=30", "-T"}
	if u.User != nil && u.User.Username() != "" {
		args = append(args, "-l", u.User.Username())
	}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	args = append(args, "--", u.Hostname(), "docker")
	if u.Path != "" && u.Path != "/" {
		args = append(args, "--host=unix://"+u.Path)
	}
	return append(args, "system", "dial-stdio")
}

// parseSSH checks an ssh:// endpoint as Docker's connection helper does:
// a host, an optional user and numeric port, no password, query or
// fragment (ssh(1) would take them as options or refuse them).
func parseSSH(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("docker host %q: %w", endpoint, err)
	}
	if _, set := u.User.Password(); set {
		return nil, fmt.Errorf("docker host %q: an ssh:// endpoint takes no password (use an SSH key or agent)", endpoint)
	}
	if u.Hostname() == "" || strings.HasPrefix(u.Hostname(), "-") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("docker host %q: want ssh://[user@]host[:port][/path/to/socket]", endpoint)
	}
	if u.User != nil && strings.HasPrefix(u.User.Username(), "-") {
		return nil, fmt.Errorf("docker host %q: a user may not start with '-'", endpoint)
	}
	return u, nil
}

// sshConn is one connection to the engine through an ssh process: what
// the client writes goes to its standard input, what it reads comes from
// its standard output. Close ends the process and waits for it.
// Deadlines are not supported (the HTTP client's context and timeout
// end a request by closing the connection).
type sshConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	stderr *capture.Buffer // the first 4 KiB of ssh's error output

	waited chan struct{} // closed once cmd.Wait returned
	once   sync.Once
}

// dialSSH starts `ssh <args>` for one connection. The process outlives
// ctx (the connection is pooled); Close ends it.
func dialSSH(ctx context.Context, args []string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command("ssh", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Its output through a pipe of our own (not StdoutPipe, which Wait
	// closes: what ssh wrote just before it exited would be lost).
	stdout, w, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout = w
	c := &sshConn{cmd: cmd, stdin: stdin, stdout: stdout, stderr: capture.Head(4 << 10), waited: make(chan struct{})}
	cmd.Stderr = c.stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("start ssh: %w", err)
	}
	// The process is waited for as soon as it ends (its error output is
	// complete then); Close kills it first, so this goroutine ends by Close
	// at the latest.
	go func() { _ = cmd.Wait(); close(c.waited) }()
	return c, nil
}

// Read reads the engine's bytes; at the end of ssh's output it says why
// when ssh wrote an error (host unreachable, authentication refused).
func (c *sshConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if errors.Is(err, io.EOF) {
		select { // ssh closed its output: give it a moment to exit
		case <-c.waited:
		case <-time.After(time.Second):
		}
		if msg := c.stderr.String(); msg != "" {
			return n, fmt.Errorf("ssh: %s: %w", strings.TrimSpace(msg), io.ErrUnexpectedEOF)
		}
	}
	return n, err
}

func (c *sshConn) Write(p []byte) (int, error) { return c.stdin.Write(p) }

// Close closes ssh's input, ends the process and waits for it. It
// returns nil.
func (c *sshConn) Close() error {
	c.once.Do(func() {
		c.stdin.Close()
		_ = c.cmd.Process.Kill()
	})
	<-c.waited
	c.stdout.Close()
	return nil
}

func (c *sshConn) LocalAddr() net.Addr              { return sshAddr{} }
func (c *sshConn) RemoteAddr() net.Addr             { return sshAddr{} }
func (c *sshConn) SetDeadline(time.Time) error      { return nil }
func (c *sshConn) SetReadDeadline(time.Time) error  { return nil }
func (c *sshConn) SetWriteDeadline(time.Time) error { return nil }

type sshAddr struct{}

func (sshAddr) Network() string { return "ssh" }
func (sshAddr) String() string  { return "ssh" }

package dnshelper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/go-acme/lego/v5/challenge"

	"github.com/gantry-proxy/gantry/internal/capture"
)

// Limits of the client.
const (
	// checkTimeout bounds `check` (the provider's constructor may call its
	// API) and a serve session's first line.
	checkTimeout = 2 * time.Minute
	// exitGrace is how long a serve session may take to exit once its
	// stdin is closed before it is killed.
	exitGrace = 30 * time.Second
	// stderrTail is how much of the helper's stderr an error quotes.
	stderrTail = 4 << 10
)

// Client is a lego DNS-01 provider (challenge.ProviderTimeout) whose
// Present and CleanUp run in the helper program. The helper runs (one
// `serve` process) while a Present has not been followed by the CleanUp of
// the same domain and token, or a call is in flight; then it exits. Close
// ends it early. A Client is safe for concurrent use.
type Client struct {
	path string   // the helper program
	args []string // [-resolvers …] <provider>
	name string   // the provider's name, for messages
	log  *slog.Logger
	in   info

	mu    sync.Mutex
	sess  *session
	calls int            // calls in flight
	open  map[string]int // domain+"\x00"+token presented and not cleaned up
}

// sequentialClient is a Client for a provider that solves one domain at a
// time (lego's dns01 sequential interface).
type sequentialClient struct{ *Client }

// Sequential returns the wait between two domains the provider asked for.
func (c sequentialClient) Sequential() time.Duration { return *c.in.Sequential }

// New runs `path [-resolvers …] provider check` (with this process's
// environment) and returns the provider. resolvers is
// dnsChallenge.resolvers; log receives the helper's log lines (nil:
// discarded). Errors: exec's when path cannot run, ErrUnknownProvider
// (wrapped, with the helper's list of names) or the provider's own message
// when its constructor fails (missing credentials…).
func New(ctx context.Context, path, provider string, resolvers []string, log *slog.Logger) (challenge.ProviderTimeout, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{path: path, name: provider, log: log, open: map[string]int{}}
	if len(resolvers) > 0 {
		c.args = append(c.args, "-"+flagResolver, strings.Join(resolvers, ","))
	}
	c.args = append(c.args, provider)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	stdout, stderr := capture.Head(MaxLine), capture.Tail(stderrTail)
	cmd := exec.CommandContext(ctx, path, append(c.args[:len(c.args):len(c.args)], cmdCheck)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = exitGrace
	if err := cmd.Run(); err != nil {
		return nil, c.exitError(err, stderr.String())
	}
	in, err := parseInfo(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s %s check: %w", path, provider, err)
	}
	c.in = in
	if in.Sequential != nil {
		return sequentialClient{c}, nil
	}
	return c, nil
}

// ErrUnknownProvider: the helper does not know the provider's name.
var ErrUnknownProvider = errors.New("unknown DNS provider")

// exitError turns a failed helper run into the error New returns.
func (c *Client) exitError(err error, stderr string) error {
	msg := oneLine(stderr)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("run %s: %w", c.path, err)
	}
	if msg == "" {
		msg = ee.String()
	}
	if ee.ExitCode() == ExitUnknown {
		// The helper's message starts with ErrUnknownProvider's text.
		return fmt.Errorf("%w%s", ErrUnknownProvider, strings.TrimPrefix(msg, ErrUnknownProvider.Error()))
	}
	return errors.New(msg)
}

// parseInfo reads the first line of check and serve.
func parseInfo(b []byte) (info, error) {
	var in info
	if err := json.Unmarshal(bytes.TrimSpace(b), &in); err != nil {
		return in, fmt.Errorf("bad first line %q: %w", b, err)
	}
	if in.Protocol != Protocol {
		return in, fmt.Errorf("protocol %d, want %d (gantry-dns and gantry come from different builds)", in.Protocol, Protocol)
	}
	if in.Timeout <= 0 || in.Interval <= 0 {
		return in, fmt.Errorf("bad first line %q: timeout and interval must be positive", b)
	}
	return in, nil
}

// Timeout returns the provider's propagation timeout and polling interval
// (challenge.ProviderTimeout).
func (c *Client) Timeout() (timeout, interval time.Duration) { return c.in.Timeout, c.in.Interval }

// Present creates the TXT record of the challenge (challenge.Provider).
func (c *Client) Present(ctx context.Context, domain, token, keyAuth string) error {
	return c.call(ctx, opPresent, domain, token, keyAuth)
}

// CleanUp removes the TXT record Present created (challenge.Provider).
func (c *Client) CleanUp(ctx context.Context, domain, token, keyAuth string) error {
	return c.call(ctx, opCleanup, domain, token, keyAuth)
}

// Close ends the helper process if one runs (closing its stdin, killing
// it after a grace period). The next call starts a new one.
func (c *Client) Close() error {
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	clear(c.open)
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.close()
}

// call runs one request in the serve process, starting it when none runs,
// and ends the process when nothing is presented any more.
func (c *Client) call(ctx context.Context, op, domain, token, keyAuth string) error {
	key := domain + "\x00" + token
	c.mu.Lock()
	s := c.sess
	if s != nil && s.dead() && c.calls == 0 {
		c.sess = nil
		c.mu.Unlock()
		s.close() // its error was reported to the calls that saw it die
		c.mu.Lock()
		s = nil
	}
	if s == nil {
		var err error
		if s, err = c.start(ctx); err != nil {
			c.mu.Unlock()
			return err
		}
		c.sess = s
	}
	c.calls++
	if op == opPresent {
		c.open[key]++
	}
	c.mu.Unlock()

	err := s.call(ctx, request{Op: op, Domain: domain, Token: token, KeyAuth: keyAuth})

	c.mu.Lock()
	c.calls--
	if op == opCleanup && c.open[key] > 0 {
		if c.open[key]--; c.open[key] == 0 {
			delete(c.open, key)
		}
	}
	var done *session
	if c.calls == 0 && c.sess == s && (len(c.open) == 0 || s.dead()) {
		done, c.sess = s, nil
		clear(c.open)
	}
	c.mu.Unlock()
	if done != nil {
		cerr := done.close()
		switch {
		case cerr == nil:
		case err == nil:
			c.log.Warn("DNS-01 helper exited with an error", "provider", c.name, "error", cerr)
		case done.dead():
			err = fmt.Errorf("%w (%v)", err, cerr)
		}
	}
	return err
}

// start runs `path args… serve` and reads its first line. Called with
// c.mu held (calls wait for the helper to start).
func (c *Client) start(ctx context.Context) (*session, error) {
	cmd := exec.Command(c.path, append(c.args[:len(c.args):len(c.args)], cmdServe)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", c.path, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", c.path, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", c.path, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", c.path, err)
	}
	s := &session{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin), waiting: map[uint64]chan string{},
		first: make(chan []byte, 1), done: make(chan struct{}), stderr: capture.Tail(stderrTail)}
	s.wg.Go(func() { s.logLines(stderr, c.log.With("helper", c.path, "provider", c.name)) })
	s.wg.Go(func() { s.read(stdout) })
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	select {
	case line := <-s.first:
		if _, err := parseInfo(line); err != nil {
			s.kill()
			_ = s.close()
			return nil, fmt.Errorf("%s %s serve: %w", c.path, c.name, err)
		}
		return s, nil
	case <-s.done:
	case <-ctx.Done():
	}
	s.kill()
	err = s.close()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s %s serve: no first line: %w", c.path, c.name, ctx.Err())
	}
	return nil, c.exitError(err, s.stderr.String())
}

// session is one running `serve` process.
type session struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	wg    sync.WaitGroup // the stdout and stderr readers

	wmu sync.Mutex // guards enc, next
	enc *json.Encoder
	// next is the last request id used.
	next uint64

	mu      sync.Mutex // guards waiting
	waiting map[uint64]chan string

	first  chan []byte     // the first line, once
	done   chan struct{}   // closed when stdout ends
	stderr *capture.Buffer // the end of the helper's stderr

	closeOnce sync.Once
	closeErr  error
}

// dead reports whether the process's stdout ended (it exited or is exiting).
func (s *session) dead() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// call sends req and waits for its answer, the end of the process or ctx.
func (s *session) call(ctx context.Context, req request) error {
	ch := make(chan string, 1)
	s.wmu.Lock()
	s.next++
	req.ID = s.next
	s.mu.Lock()
	s.waiting[req.ID] = ch
	s.mu.Unlock()
	err := s.enc.Encode(req)
	s.wmu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, req.ID)
		s.mu.Unlock()
	}()
	if err != nil {
		return fmt.Errorf("send %s request to %s: %w", req.Op, s.cmd.Path, err)
	}
	select {
	case msg := <-ch:
		if msg != "" {
			return errors.New(msg)
		}
		return nil
	case <-s.done:
		// An answer may have arrived just before stdout ended.
		select {
		case msg := <-ch:
			if msg != "" {
				return errors.New(msg)
			}
			return nil
		default:
		}
		err := fmt.Errorf("%s exited before answering %s %s", s.cmd.Path, req.Op, req.Domain)
		if msg := oneLine(s.stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s %s: %w", req.Op, req.Domain, ctx.Err())
	}
}

// read hands the first line to s.first and each answer to its caller,
// until stdout ends; then it closes s.done.
func (s *session) read(r io.Reader) {
	defer close(s.done)
	lr := lineReader{r: r, max: MaxLine}
	line, ok := lr.next()
	if !ok {
		return
	}
	s.first <- line
	for {
		line, ok := lr.next()
		if !ok {
			return
		}
		var res response
		if err := json.Unmarshal(line, &res); err != nil {
			s.stderr.Write([]byte(fmt.Sprintf("\nbad answer %q: %v", line, err)))
			s.kill()
			return
		}
		s.mu.Lock()
		ch := s.waiting[res.ID]
		s.mu.Unlock()
		if ch != nil {
			ch <- res.Error // buffered: one answer per id
		}
	}
}

// logLines logs each stderr line of the helper and keeps the last ones.
func (s *session) logLines(r io.Reader, log *slog.Logger) {
	lr := lineReader{r: r, max: stderrTail}
	for {
		line, ok := lr.next()
		if !ok {
			return
		}
		s.stderr.Write(line)
		s.stderr.Write([]byte{'\n'})
		log.Info(string(line))
	}
}

// kill stops the process at once.
func (s *session) kill() { _ = s.cmd.Process.Kill() }

// close closes stdin, waits (exitGrace at most, then kills) for the process
// to exit and for its readers, and returns how it exited.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		_ = s.stdin.Close()
		t := time.AfterFunc(exitGrace, s.kill)
		s.wg.Wait()
		s.closeErr = s.cmd.Wait()
		t.Stop()
	})
	return s.closeErr
}

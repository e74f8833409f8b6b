package dnshelper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/challenge/dns01"
)

// Protocol is the version of the protocol this package speaks (see the
// package documentation); check and serve report it.
const Protocol = 1

// MaxLine is the longest request or response line, in bytes.
const MaxLine = 64 << 10

// Exit statuses of the helper.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitUsage    = 2
	ExitUnknown  = 3
	opPresent    = "present"
	opCleanup    = "cleanup"
	cmdCheck     = "check"
	cmdServe     = "serve"
	cmdNames     = "names"
	flagResolver = "resolvers"
)

// Registry is what the helper serves: Lookup returns the constructor of a
// provider by lego's name or alias (any case), ok false when unknown;
// Names lists the known names, sorted.
type Registry struct {
	Lookup func(name string) (mk func() (challenge.Provider, error), ok bool)
	Names  func() []string
}

// info is the first line of check and serve.
type info struct {
	Protocol   int            `json:"protocol"`
	Timeout    time.Duration  `json:"timeout"`
	Interval   time.Duration  `json:"interval"`
	Sequential *time.Duration `json:"sequential,omitempty"`
}

// request and response are the lines of serve.
type request struct {
	ID      uint64 `json:"id"`
	Op      string `json:"op"`
	Domain  string `json:"domain"`
	Token   string `json:"token"`
	KeyAuth string `json:"keyAuth"`
}

type response struct {
	ID    uint64 `json:"id"`
	Error string `json:"error"`
}

// Main runs the helper with the command line args (without the program
// name) and returns its exit status. Requests run with ctx; cancelling it
// makes the providers' calls fail, not serve return early.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, reg Registry) int {
	fs := flag.NewFlagSet("gantry-dns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	resolvers := fs.String(flagResolver, "", "recursive nameservers for lego's DNS lookups, comma-separated host:port")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gantry-dns [-resolvers host:port,...] <provider> check|serve\n       gantry-dns names\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	rest := fs.Args()
	if len(rest) == 1 && rest[0] == cmdNames {
		for _, n := range reg.Names() {
			fmt.Fprintln(stdout, n)
		}
		return ExitOK
	}
	if len(rest) != 2 || (rest[1] != cmdCheck && rest[1] != cmdServe) {
		fs.Usage()
		return ExitUsage
	}
	name, cmd := rest[0], rest[1]
	mk, ok := reg.Lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "unknown DNS provider %q (available in this build: %s)\n", name, strings.Join(reg.Names(), ", "))
		return ExitUnknown
	}
	if *resolvers != "" {
		opts := dns01.NewOptions()
		opts.RecursiveNameservers = strings.Split(*resolvers, ",")
		dns01.SetDefaultClient(dns01.NewClient(opts))
	}
	p, err := mk()
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err.Error()))
		return ExitFailed
	}
	in := info{Protocol: Protocol, Timeout: dns01.DefaultPropagationTimeout, Interval: dns01.DefaultPollingInterval}
	if t, ok := p.(challenge.ProviderTimeout); ok {
		in.Timeout, in.Interval = t.Timeout()
	}
	if s, ok := p.(interface{ Sequential() time.Duration }); ok {
		d := s.Sequential()
		in.Sequential = &d
	}
	if err := json.NewEncoder(stdout).Encode(in); err != nil {
		fmt.Fprintf(stderr, "write: %v\n", err)
		return ExitFailed
	}
	if cmd == cmdCheck {
		return ExitOK
	}
	if err := serve(ctx, p, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, oneLine(err.Error()))
		return ExitFailed
	}
	return ExitOK
}

// serve answers the requests read from r on w, each in its own goroutine,
// until r ends; it returns after the last answer. A malformed line is an
// error (the client never writes one).
func serve(ctx context.Context, p challenge.Provider, r io.Reader, w io.Writer) error {
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex // guards enc and werr
		enc = json.NewEncoder(w)
		// werr is the first write error: the client is gone.
		werr error
	)
	defer wg.Wait()
	answer := func(id uint64, err error) {
		res := response{ID: id}
		if err != nil {
			res.Error = oneLine(err.Error())
		}
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = enc.Encode(res)
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxLine)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		if req.Domain == "" || req.Token == "" || req.KeyAuth == "" {
			return fmt.Errorf("request %d: domain, token and keyAuth are required", req.ID)
		}
		var call func(context.Context, string, string, string) error
		switch req.Op {
		case opPresent:
			call = p.Present
		case opCleanup:
			call = p.CleanUp
		default:
			return fmt.Errorf("request %d: unknown op %q (want present or cleanup)", req.ID, req.Op)
		}
		wg.Go(func() { answer(req.ID, call(ctx, req.Domain, req.Token, req.KeyAuth)) })
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("request longer than %d bytes", MaxLine)
		}
		return fmt.Errorf("read requests: %w", err)
	}
	return nil
}

// oneLine keeps a message on one line (the protocol is line-based).
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "whoami:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	port    int
	addr    string
	name    string
	cert    string
	key     string
	verbose bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("whoami", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defPort := 80
	if v, err := strconv.Atoi(os.Getenv("WHOAMI_PORT_NUMBER")); err == nil {
		defPort = v
	}
	fs.IntVar(&o.port, "port", defPort, "TCP port to listen on (0 picks a free port; env WHOAMI_PORT_NUMBER)")
	fs.StringVar(&o.addr, "addr", "", "full listen address host:port (overrides --port)")
	fs.StringVar(&o.name, "name", os.Getenv("WHOAMI_NAME"), "name echoed as \"Name: ...\"")
	fs.StringVar(&o.cert, "cert", "", "TLS certificate file (PEM)")
	fs.StringVar(&o.key, "key", "", "TLS key file (PEM)")
	fs.BoolVar(&o.verbose, "verbose", false, "log every request")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if (o.cert == "") != (o.key == "") {
		return o, errors.New("--cert and --key go together")
	}
	if o.addr == "" {
		o.addr = ":" + strconv.Itoa(o.port)
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", o.addr, err)
	}
	var h http.Handler = newServer(o.name)
	if o.verbose {
		h = logRequests(log, h)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	if o.cert != "" {
		cert, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return fmt.Errorf("load certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	fmt.Fprintf(stdout, "whoami: listening on %s\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	<-errc
	return nil
}

func logRequests(log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Info("request", "method", r.Method, "uri", r.RequestURI, "remote", r.RemoteAddr)
		h.ServeHTTP(w, r)
	})
}

package dnshelper

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	legolog "github.com/go-acme/lego/v5/log"
)

// Run is the helper program's main: it runs Main with os.Args, stdin and
// stdout, and returns the exit status. stdout carries the protocol only:
// os.Stdout becomes os.Stderr for the providers, and every log (slog's and
// lego's, which defaults to stdout) goes to stderr as text. SIGINT and
// SIGTERM cancel the providers' calls.
func Run(reg Registry) int {
	proto := os.Stdout
	os.Stdout = os.Stderr
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger)
	legolog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Main(ctx, os.Args[1:], os.Stdin, proto, os.Stderr, reg)
}

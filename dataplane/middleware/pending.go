package middleware

import (
	"errors"

	"github.com/gantry-proxy/gantry/config"
)

var errPending = errors.New("not built yet")

func newBuffering(*config.Buffering) (Middleware, error)                         { return nil, errPending }
func newCircuitBreaker(*config.CircuitBreaker) (Middleware, error)               { return nil, errPending }
func newPassTLSClientCert(*config.PassTLSClientCert) (Middleware, error)         { return nil, errPending }
func newRetry(*config.Retry) (Middleware, error)                                 { return nil, errPending }
func newGrpcWeb(*config.GrpcWeb) (Middleware, error)                             { return nil, errPending }

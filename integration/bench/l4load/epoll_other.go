//go:build !linux

package main

import (
	"errors"
	"time"
)

const haveEpoll = false

func tcpEpoll(*config, int, time.Time, *counters, []uint64) error {
	return errors.New("the epoll engine is Linux only: use -engine go")
}

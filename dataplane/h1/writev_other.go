//go:build !unix

package h1

import "syscall"

// writev2 is not used without unix writev (raw connections are unix only).
func writev2(syscall.RawConn, []byte, []byte) (int, error) { return 0, syscall.EINVAL }

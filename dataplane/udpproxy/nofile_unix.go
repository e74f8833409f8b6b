//go:build unix

package udpproxy

import "syscall"

// nofileLimit is the soft RLIMIT_NOFILE (0 when unknown).
func nofileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return uint64(rl.Cur)
}

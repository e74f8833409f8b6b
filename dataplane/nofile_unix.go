//go:build unix

package dataplane

import "syscall"

// nofileLimit is the soft RLIMIT_NOFILE (0 when unknown). Go raises the
// soft limit to the hard one at start (Linux, since Go 1.19), so this is
// the hard limit unless the process lowered it.
func nofileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return uint64(rl.Cur)
}

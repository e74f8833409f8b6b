package exepages

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Release drops the page-table entries of the running executable's
// read-only mappings (see the package documentation) and returns how many
// bytes of address space it advised (mapped or not). It does nothing when
// the process is traced (TracerPid in /proc/self/status). Errors name the
// /proc file or the system call that failed; the process runs on either
// way.
func Release() (int64, error) {
	if traced, err := isTraced("/proc/self/status"); err != nil || traced {
		return 0, err
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, fmt.Errorf("stat /proc/self/exe: %w", err)
	}
	exe := File{Major: unix.Major(st.Dev), Minor: unix.Minor(st.Dev), Inode: st.Ino}
	mf, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer mf.Close()
	ms, err := ReadOnlyMappings(mf, "/proc/self/maps", exe)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, m := range ms {
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, m.Start, m.End-m.Start, unix.MADV_DONTNEED)
		if errno != 0 {
			return n, fmt.Errorf("madvise(%#x, %d, MADV_DONTNEED): %w", m.Start, m.End-m.Start, errno)
		}
		n += int64(m.End - m.Start)
	}
	return n, nil
}

// isTraced reports whether the status file at path (/proc/<pid>/status)
// names a tracer (TracerPid other than 0).
func isTraced(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0", nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return false, fmt.Errorf("%s: no TracerPid line", path)
}

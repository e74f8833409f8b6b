package exepages

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxMappings bounds the /proc/self/maps lines read (a Go process has a
// few dozen; more means the file is not what it should be).
const maxMappings = 1 << 16

// Mapping is one address range of /proc/self/maps: [Start, End), in bytes.
type Mapping struct {
	Start, End uintptr
}

// File identifies a mapped file as /proc/<pid>/maps does: the device's
// major and minor numbers and the inode.
type File struct {
	Major, Minor uint32
	Inode        uint64
}

// ReadOnlyMappings returns, in address order, the mappings of r (the
// /proc/<pid>/maps format) that map file f readable, not writable and
// private: the executable's code and read-only data when f is the
// executable. Its data and BSS (writable) and anything else are left out.
// A malformed line is an error naming its number and src.
func ReadOnlyMappings(r io.Reader, src string, f File) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10) // a path is at most PATH_MAX
	for n := 1; sc.Scan(); n++ {
		if n > maxMappings {
			return nil, fmt.Errorf("%s: more than %d mappings", src, maxMappings)
		}
		m, perms, file, err := parseLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", src, n, err)
		}
		if file == f && len(perms) == 4 && perms[0] == 'r' && perms[1] != 'w' && perms[3] == 'p' {
			out = append(out, m)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	return out, nil
}

// parseLine parses "start-end perms offset major:minor inode [path]",
// numbers in hexadecimal except the inode.
func parseLine(line string) (m Mapping, perms string, f File, err error) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return m, "", f, fmt.Errorf("%d fields, want at least 5: %q", len(fields), line)
	}
	start, end, ok := strings.Cut(fields[0], "-")
	dmaj, dmin, ok2 := strings.Cut(fields[3], ":")
	if !ok || !ok2 {
		return m, "", f, fmt.Errorf("malformed range or device: %q", line)
	}
	s, err1 := strconv.ParseUint(start, 16, 64)
	e, err2 := strconv.ParseUint(end, 16, 64)
	maj, err3 := strconv.ParseUint(dmaj, 16, 32)
	mnr, err4 := strconv.ParseUint(dmin, 16, 32)
	ino, err5 := strconv.ParseUint(fields[4], 10, 64)
	for _, e := range []error{err1, err2, err3, err4, err5} {
		if e != nil {
			return m, "", f, fmt.Errorf("%q: %w", line, e)
		}
	}
	if e < s {
		return m, "", f, fmt.Errorf("range ends before it starts: %q", line)
	}
	return Mapping{Start: uintptr(s), End: uintptr(e)}, fields[1], File{Major: uint32(maj), Minor: uint32(mnr), Inode: ino}, nil
}

package exepages

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// mappedPages counts the pages of the test binary's read-only mappings
// that are mapped into this process (/proc/self/pagemap's present bit).
func mappedPages(t *testing.T) (mapped, total int) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	mf, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	ms, err := ReadOnlyMappings(mf, "/proc/self/maps", File{Major: unix.Major(st.Dev), Minor: unix.Minor(st.Dev), Inode: st.Ino})
	if err != nil || len(ms) == 0 {
		t.Fatalf("executable mappings: %v, %v", ms, err)
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	page := uintptr(os.Getpagesize())
	for _, m := range ms {
		n := int((m.End - m.Start) / page)
		buf := make([]byte, 8*n)
		if _, err := pm.ReadAt(buf, int64(m.Start/page*8)); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if binary.LittleEndian.Uint64(buf[8*i:])>>63 == 1 {
				mapped++
			}
		}
		total += n
	}
	return mapped, total
}

func TestReleaseUnmapsTheExecutablesPages(t *testing.T) {
	before, total := mappedPages(t)
	n, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after, _ := mappedPages(t)
	t.Logf("read-only executable pages mapped: %d of %d before, %d after; %d bytes advised", before, total, after, n)
	if n < int64(total)*int64(os.Getpagesize()) {
		t.Errorf("advised %d bytes, want the %d pages of the read-only mappings", n, total)
	}
	// What runs between Release and the count maps some pages again (the
	// kernel maps whole folios, up to 2 MB, around each): fewer than before
	// still, where pages are only ever added without Release.
	if after >= before {
		t.Errorf("%d pages mapped after Release, %d before: want fewer", after, before)
	}
}

func TestIsTraced(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		status string
		traced bool
		err    bool
	}{
		{"Name:\tgantry\nTracerPid:\t0\n", false, false},
		{"Name:\tgantry\nTracerPid:\t4242\n", true, false},
		{"Name:\tgantry\n", false, true},
	} {
		p := filepath.Join(dir, "status")
		if err := os.WriteFile(p, []byte(c.status), 0o600); err != nil {
			t.Fatal(err)
		}
		traced, err := isTraced(p)
		if traced != c.traced || (err != nil) != c.err {
			t.Errorf("%q: traced %v, error %v; want %v, error %v", c.status, traced, err, c.traced, c.err)
		}
	}
}

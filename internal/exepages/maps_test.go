package exepages

import (
	"strings"
	"testing"
)

const mapsFixture = `00400000-01b71000 r-xp 00000000 fd:00 1234 /usr/bin/gantry
01b71000-033e5000 r--p 01771000 fd:00 1234 /usr/bin/gantry
033e5000-034f8000 rw-p 02fe5000 fd:00 1234 /usr/bin/gantry
034f8000-05549000 rw-p 00000000 00:00 0
7f8177403000-7f817740b000 r--s 00000000 fd:00 99 /var/lib/gantry/gantry.db
7f8177500000-7f8177600000 r--p 00000000 fd:01 1234 /other/device/same/inode
7f8177600000-7f8177700000 r--p 00000000 fd:00 1234 /usr/bin/gantry (deleted)
7ffd0438f000-7ffd043b0000 rw-p 00000000 00:00 0                          [stack]
`

func TestReadOnlyMappingsOfTheExecutable(t *testing.T) {
	got, err := ReadOnlyMappings(strings.NewReader(mapsFixture), "fixture", File{Major: 0xfd, Minor: 0, Inode: 1234})
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{{0x400000, 0x1b71000}, {0x1b71000, 0x33e5000}, {0x7f8177600000, 0x7f8177700000}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mapping %d: got %x, want %x", i, got[i], want[i])
		}
	}
}

func TestReadOnlyMappingsMalformed(t *testing.T) {
	for _, line := range []string{
		"00400000-01b71000 r-xp 00000000 fd:00",
		"00400000 r-xp 00000000 fd:00 1234 /x",
		"00400000-zz r-xp 00000000 fd:00 1234 /x",
		"00400000-01b71000 r-xp 00000000 fd00 1234 /x",
		"00400000-01b71000 r-xp 00000000 fd:00 -1 /x",
		"01b71000-00400000 r-xp 00000000 fd:00 1234 /x",
	} {
		_, err := ReadOnlyMappings(strings.NewReader("034f8000-05549000 rw-p 00000000 00:00 0\n"+line+"\n"), "fixture", File{})
		if err == nil || !strings.Contains(err.Error(), "fixture line 2") {
			t.Errorf("%q: error %v, want one naming fixture line 2", line, err)
		}
	}
}

func TestReadOnlyMappingsBounded(t *testing.T) {
	big := strings.Repeat("034f8000-05549000 rw-p 00000000 00:00 0\n", maxMappings+1)
	if _, err := ReadOnlyMappings(strings.NewReader(big), "fixture", File{}); err == nil {
		t.Fatal("no error for more than maxMappings lines")
	}
}

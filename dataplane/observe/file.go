package observe

import (
	"fmt"
	"os"
	"sync"
)

// File is an append-only log file that can be reopened at the same path,
// for logrotate: after the file is renamed, Reopen (on SIGUSR1, as in
// Traefik) starts a new file at the path. Lines written before Reopen land
// in the renamed file, lines after in the new one: none is lost. Safe for
// concurrent use.
type File struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenFile opens (creating, mode 0644) path for appending.
func OpenFile(path string) (*File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &File{path: path, f: f}, nil
}

// Write appends p.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Write(p)
}

// Reopen opens the path again and closes the previous file. When the path
// cannot be opened, the previous file stays in use and the error is
// returned.
func (f *File) Reopen() error {
	nf, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("reopen %s: %w", f.path, err)
	}
	f.mu.Lock()
	old := f.f
	f.f = nf
	f.mu.Unlock()
	return old.Close()
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Close()
}

// Package handoff passes listening sockets from a running Gantry to the new
// binary that replaces it (the binary upgrade, signal SIGUSR2), the way
// nginx (USR2) and HAProxy (-x / -sf) do.
//
// The old process starts the executable with its own arguments and
// environment, passes each listening socket as an inherited file descriptor
// (exec.Cmd.ExtraFiles) and names them in EnvFDs, plus the write end of a
// pipe named in EnvReady. The new process serves on the very same sockets
// (no bind: the kernel's accept queue is shared, so a connection queued
// while the processes change hands is accepted by one of them), writes one
// byte to the pipe once it serves, and the old process then stops accepting
// and drains.
//
// Why fd passing rather than a second SO_REUSEPORT bind: with SO_REUSEPORT
// each socket has its own accept queue, and the kernel drops (resets) the
// connections still queued on a socket when it is closed, so the old
// process closing its listeners would reset clients. A passed descriptor is
// the same socket: closing the old process's copy closes nothing.
package handoff

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Environment variables the new process reads.
const (
	// EnvFDs names the inherited sockets: "key=fd,fd;key=fd", keys
	// "tcp/<entrypoint>", "h3/<entrypoint>" (HTTP/3 UDP socket) and
	// "udp/<entrypoint>".
	EnvFDs = "GANTRY_UPGRADE_FDS"
	// EnvReady is the descriptor the new process writes one byte to when it
	// serves.
	EnvReady = "GANTRY_UPGRADE_READY_FD"
)

// maxFDs bounds the descriptors one environment value may name.
const maxFDs = 4096

// Socket is one listening socket to pass: Key as in EnvFDs, File a
// duplicate of the socket's descriptor (the receiver closes it).
type Socket struct {
	Key  string
	File *os.File
}

// Inherited holds the sockets a new process received. The zero value and
// nil hold none.
type Inherited struct {
	mu    sync.Mutex
	files map[string][]*os.File
	ready *os.File
	// local: from FromSockets (this process), not from an upgrade.
	local bool
}

// Origin says where the sockets come from, for logs: "upgrade" (FromEnv)
// or "entrypoint replaced" (FromSockets).
func (in *Inherited) Origin() string {
	if in != nil && in.local {
		return "entrypoint replaced"
	}
	return "upgrade"
}

// FromEnv reads EnvFDs and EnvReady from getenv. It returns nil, nil when
// the process was not started by an upgrade. Errors name the variable.
func FromEnv(getenv func(string) string) (*Inherited, error) {
	spec, rfd := getenv(EnvFDs), getenv(EnvReady)
	if spec == "" && rfd == "" {
		return nil, nil
	}
	in := &Inherited{files: map[string][]*os.File{}}
	n := 0
	for part := range strings.SplitSeq(spec, ";") {
		if part == "" {
			continue
		}
		key, list, ok := strings.Cut(part, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%s: %q: want key=fd[,fd]", EnvFDs, part)
		}
		for f := range strings.SplitSeq(list, ",") {
			fd, err := strconv.Atoi(f)
			if err != nil || fd < 3 {
				return nil, fmt.Errorf("%s: %q: bad descriptor %q", EnvFDs, part, f)
			}
			if n++; n > maxFDs {
				return nil, fmt.Errorf("%s: more than %d descriptors", EnvFDs, maxFDs)
			}
			in.files[key] = append(in.files[key], os.NewFile(uintptr(fd), key))
		}
	}
	if rfd != "" {
		fd, err := strconv.Atoi(rfd)
		if err != nil || fd < 3 {
			return nil, fmt.Errorf("%s: bad descriptor %q", EnvReady, rfd)
		}
		in.ready = os.NewFile(uintptr(fd), "upgrade-ready")
	}
	return in, nil
}

// Listeners takes the TCP listeners inherited under key (nil when none).
// The descriptors are consumed: a second call returns nil.
func (in *Inherited) Listeners(key string) ([]net.Listener, error) {
	files := in.take(key)
	var out []net.Listener
	for i, f := range files {
		l, err := net.FileListener(f)
		_ = f.Close() // FileListener dups it
		if err != nil {
			for _, l := range out {
				_ = l.Close()
			}
			closeAll(files[i+1:])
			return nil, fmt.Errorf("inherited socket %s: %w", key, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// PacketConn takes the UDP socket inherited under key (nil when none).
func (in *Inherited) PacketConn(key string) (net.PacketConn, error) {
	files := in.take(key)
	if len(files) == 0 {
		return nil, nil
	}
	defer closeAll(files)
	pc, err := net.FilePacketConn(files[0])
	if err != nil {
		return nil, fmt.Errorf("inherited socket %s: %w", key, err)
	}
	return pc, nil
}

func (in *Inherited) take(key string) []*os.File {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	f := in.files[key]
	delete(in.files, key)
	return f
}

// Unused closes the sockets nobody took (an entrypoint the new static
// configuration no longer has) and returns their keys, sorted.
func (in *Inherited) Unused() []string {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	var keys []string
	for k, files := range in.files {
		keys = append(keys, k)
		closeAll(files)
	}
	in.files = map[string][]*os.File{}
	slices.Sort(keys)
	return keys
}

// Ready tells the old process that this one serves (one byte on the
// EnvReady pipe, then closed). Later calls do nothing.
func (in *Inherited) Ready() error {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ready == nil {
		return nil
	}
	_, err := in.ready.Write([]byte{1})
	cerr := in.ready.Close()
	in.ready = nil
	if err = errors.Join(err, cerr); err != nil {
		return fmt.Errorf("signal readiness to the old process: %w", err)
	}
	return nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// FromSockets returns the Inherited holding socks (by Key), for a Server
// that hands an entrypoint's sockets to its successor in the same process
// (a live static reload changing the entrypoint's settings, not its
// address). It takes ownership of the files.
func FromSockets(socks []Socket) *Inherited {
	in := &Inherited{files: map[string][]*os.File{}, local: true}
	for _, s := range socks {
		in.files[s.Key] = append(in.files[s.Key], s.File)
	}
	return in
}

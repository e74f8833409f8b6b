// Package localimage builds the root directories of FROM scratch images of
// Debian's redis-server and postgresql server from the host's binaries, the
// shared libraries ldd lists and the files they need: images a machine with
// no registry can build (the Docker integration tests and
// scripts/tcp-images.sh, for examples/tcp, use the same code).
package localimage

import (
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Dockerfiles of the two images: each copies its context to / .
var (
	//go:embed redis.Dockerfile
	RedisDockerfile string
	//go:embed postgres.Dockerfile
	PostgresDockerfile string
)

// Redis copies the host's redis-server and the shared libraries it
// needs (ldd) into dir/ctx-redis, keeping their paths. It returns false
// when redis-server is not installed (a caller reports it).
func Redis(dir string) (bool, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return false, nil
	}
	bin, _ = filepath.EvalSymlinks(bin)
	return true, copyWithLibs(filepath.Join(dir, "ctx-redis"), map[string]string{bin: "usr/bin/redis-server"})
}

// copyWithLibs copies each host binary (key) to its path in ctx (value) and
// the shared libraries ldd lists for it to their host paths, so that a FROM
// scratch image of ctx runs it.
func copyWithLibs(ctx string, bins map[string]string) error {
	for bin, dst := range bins {
		out, err := exec.Command("ldd", bin).Output()
		if err != nil {
			return fmt.Errorf("ldd %s: %w", bin, err)
		}
		files := map[string]string{bin: dst}
		for _, line := range strings.Split(string(out), "\n") {
			for _, f := range strings.Fields(line) {
				if strings.HasPrefix(f, "/") {
					files[f] = f
				}
			}
		}
		for src, dst := range files {
			if err := copyFile(src, filepath.Join(ctx, dst), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyFile copies src to dst with mode, creating dst's directories.
func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// PostgresUID is the uid and gid the postgres test image runs as (postgres
// refuses to run as root); postgres.Dockerfile chowns the context to it.
const PostgresUID = 999

// Postgres builds dir/ctx-postgres, the root of a FROM scratch image
// of Debian's postgresql server (see testdata/postgres.Dockerfile):
//   - the newest /usr/lib/postgresql/<v>/bin/postgres with the shared
//     libraries ldd lists, at their host paths, and /usr/local/bin/postgres
//     linking to it (postgres finds its share directory from its real path);
//   - /usr/share/postgresql/<v> (timezone sets, catalogs),
//     /usr/share/zoneinfo (Debian builds postgres with the system tzdata)
//     and /usr/lib/postgresql/<v>/lib (plpgsql and the other loadable
//     modules; without the JIT's 26 MB of bitcode);
//   - a data directory in /var/lib/postgresql/data (PGDATA) made by the
//     host's initdb (the image has no shell for initdb's popen), trusting
//     every host (the test checks the transport, not authentication),
//     listening on every address, without a Unix socket;
//   - a self-signed certificate for db.localhost at Debian's snakeoil
//     paths, the ones the compose file enables ssl with (they exist in the
//     official postgres image too);
//   - /etc/passwd and /etc/group naming uid PostgresUID postgres.
//
// It returns false when the postgresql server is not installed.
func Postgres(dir string) (bool, error) {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		return false, nil
	}
	sort.Slice(bins, func(i, j int) bool { return pgVersion(bins[i]) < pgVersion(bins[j]) })
	bin := bins[len(bins)-1]
	ver := strconv.Itoa(pgVersion(bin))
	initdb := filepath.Join(filepath.Dir(bin), "initdb")
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		return false, nil
	}
	ctx := filepath.Join(dir, "ctx-postgres")
	if err := copyWithLibs(ctx, map[string]string{bin: bin}); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Join(ctx, "usr/local/bin"), 0o755); err != nil {
		return false, err
	}
	if err := os.Symlink(bin, filepath.Join(ctx, "usr/local/bin/postgres")); err != nil {
		return false, err
	}
	for _, tree := range []string{"/usr/share/postgresql/" + ver, "/usr/share/zoneinfo", "/usr/lib/postgresql/" + ver + "/lib"} {
		if err := copyTree(tree, filepath.Join(ctx, tree)); err != nil {
			return false, err
		}
	}
	if err := initPGData(initdb, filepath.Join(ctx, "var/lib/postgresql/data")); err != nil {
		return false, err
	}
	crt := filepath.Join(ctx, "etc/ssl/certs/ssl-cert-snakeoil.pem")
	key := filepath.Join(ctx, "etc/ssl/private/ssl-cert-snakeoil.key")
	for _, d := range []string{filepath.Dir(crt), filepath.Dir(key)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return false, err
		}
	}
	if out, err := exec.Command(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
		"-nodes", "-days", "2", "-subj", "/CN=db.localhost", "-addext", "subjectAltName=DNS:db.localhost",
		"-keyout", key, "-out", crt).CombinedOutput(); err != nil {
		return false, fmt.Errorf("openssl req: %w\n%s", err, out)
	}
	// postgres wants the key readable by its owner only.
	if err := os.Chmod(key, 0o600); err != nil {
		return false, err
	}
	id := strconv.Itoa(PostgresUID)
	for f, line := range map[string]string{
		"etc/passwd": "postgres:x:" + id + ":" + id + ":postgres:/var/lib/postgresql:/nonexistent\n",
		"etc/group":  "postgres:x:" + id + ":\n",
	} {
		if err := os.WriteFile(filepath.Join(ctx, f), []byte(line), 0o644); err != nil {
			return false, err
		}
	}
	return true, nil
}

// pgVersion is the major version in /usr/lib/postgresql/<v>/bin/postgres.
func pgVersion(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(bin))))
	return v
}

// initPGData runs initdb into a scratch directory of its own (as the
// postgres user when root: initdb refuses root) and copies the result to
// data with its modes (postgres wants 0700 on the directory).
func initPGData(initdb, data string) error {
	tmp, err := os.MkdirTemp("", "gantry-pginit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "data")
	argv := []string{initdb, "-D", src, "-A", "trust", "-U", "postgres", "--no-sync", "--locale=C", "-E", "UTF8"}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root and no postgres user (install postgresql): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(tmp, uid, gid); err != nil {
			return err
		}
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	conf := "\nlisten_addresses = '*'\nunix_socket_directories = ''\nfsync = off\n"
	if err := appendFile(filepath.Join(src, "postgresql.conf"), conf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "pg_hba.conf"), []byte("host all all all trust\n"), 0o600); err != nil {
		return err
	}
	return copyTree(src, data)
}

func appendFile(name, s string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyTree copies the regular files, directories and symlinks under src to
// dst, keeping their permission bits.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := d.Name(); name == "bitcode" || strings.HasPrefix(name, "llvmjit") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			if err := copyFile(p, to, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chmod(to, info.Mode().Perm())
		}
		return fmt.Errorf("copy %s: not a file, directory or symlink", strings.TrimPrefix(p, src))
	})
}

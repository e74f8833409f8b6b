// Command localimage builds FROM scratch images of the host's Debian
// redis-server and postgresql server (package localimage), for
// examples/tcp on a machine that cannot pull redis:7 or postgres:17:
//
//	go run ./scripts/localimage [-redis redis:local] [-postgres postgres:local]
//
// It needs docker, redis-server, postgresql and openssl installed
// (Debian: apt-get install docker.io redis-server postgresql openssl).
// An image whose server is not installed is skipped with a message; the
// exit status is non-zero if a build fails or none could be built.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gantry-proxy/gantry/integration/docker/localimage"
)

func main() {
	redis := flag.String("redis", "redis:local", "tag of the redis-server image (empty: skip)")
	postgres := flag.String("postgres", "postgres:local", "tag of the postgres image (empty: skip)")
	flag.Parse()
	if err := run(*redis, *postgres); err != nil {
		fmt.Fprintln(os.Stderr, "localimage:", err)
		os.Exit(1)
	}
}

func run(redisTag, postgresTag string) error {
	dir, err := os.MkdirTemp("", "gantry-localimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	images := []struct {
		tag, name, dockerfile, need string
		build                       func(string) (bool, error)
	}{
		{redisTag, "redis", localimage.RedisDockerfile, "redis-server", localimage.Redis},
		{postgresTag, "postgres", localimage.PostgresDockerfile, "postgresql and openssl", localimage.Postgres},
	}
	built := 0
	for _, img := range images {
		if img.tag == "" {
			continue
		}
		ok, err := img.build(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", img.name, err)
		}
		if !ok {
			fmt.Fprintf(os.Stderr, "localimage: %s skipped: %s not installed on this host\n", img.tag, img.need)
			continue
		}
		df := filepath.Join(dir, img.name+".Dockerfile")
		if err := os.WriteFile(df, []byte(img.dockerfile), 0o644); err != nil {
			return err
		}
		cmd := exec.Command("docker", "build", "-q", "-t", img.tag, "-f", df, filepath.Join(dir, "ctx-"+img.name))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("docker build %s: %w", img.tag, err)
		}
		fmt.Fprintf(os.Stderr, "localimage: built %s\n", img.tag)
		built++
	}
	if built == 0 {
		return fmt.Errorf("no image built")
	}
	return nil
}

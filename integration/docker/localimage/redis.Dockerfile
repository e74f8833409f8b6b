# Test image of Debian's redis-server, built FROM scratch from the host's
# binary and the shared libraries ldd lists (no registry is reachable in
# tests); see Redis in localimage.go.
FROM scratch
COPY . /
EXPOSE 6379
ENTRYPOINT ["/usr/bin/redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]

# Test image of cmd/whoami, built FROM scratch from binaries compiled on the
# host (no registry is reachable in tests). probe is the health check tool.
FROM scratch
COPY whoami probe /
EXPOSE 80
ENTRYPOINT ["/whoami"]

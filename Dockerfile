# Gantry image: a static binary on an empty base.
#
#   docker build -t gantry:local .
#   docker compose up -d          (see docker-compose.yml)
#
# GO_IMAGE selects the Go toolchain image (Go 1.26, as go.mod requires).
# The integration tests, which cannot reach a registry, build the same
# layout FROM scratch from a binary compiled on the host
# (integration/docker/testdata/gantry.Dockerfile).
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/gantry ./cmd/gantry \
 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
      -o /out/gantry-dns ./cmd/gantry-dns \
 && mkdir -p /out/data

FROM scratch
COPY --from=build /out/gantry /gantry
# lego's DNS-01 providers, which gantry runs from its own directory only
# while it solves a dnsChallenge.
COPY --from=build /out/gantry-dns /gantry-dns
# CA roots, so https:// servers and forwardAuth with public certificates
# verify.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# The working directory holds gantry.db, the last good configuration; mount
# a volume on /data to keep it across container restarts.
COPY --from=build /out/data /data
WORKDIR /data
# web entrypoint, and the API/dashboard entrypoint ("traefik") with --api.
EXPOSE 80 8080
ENTRYPOINT ["/gantry"]

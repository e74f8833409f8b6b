# Test image of cmd/gantry, built FROM scratch from a static binary compiled
# on the host. The repository's Dockerfile builds the same image from source.
FROM scratch
COPY gantry /gantry
WORKDIR /data
EXPOSE 80 8080
ENTRYPOINT ["/gantry"]

# Test image of Debian's postgresql server, built FROM scratch from the
# host's binary, the shared libraries ldd lists, its share directory, the
# system tzdata and a data directory made by the host's initdb (no registry
# is reachable in tests; no shell in the image); see Postgres in
# localimage.go. Like the official postgres image it takes postgres
# options as its command (the compose file passes -c ssl=on ...) and keeps
# its data in PGDATA.
FROM scratch
COPY --chown=999:999 . /
USER 999:999
ENV PGDATA=/var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres"]

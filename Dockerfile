# The migrate tool as a container image: one static binary and the CA
# certificates it needs to reach AWS over TLS, on an empty base. It pulls
# nothing from a registry: `make docker` builds the binary (CGO_ENABLED=0)
# and copies the host's CA bundle into the build context, bin/docker/.
#
#   make docker                         # image pgdynamo/migrate:dev
#   docker run --rm pgdynamo/migrate:dev version
#
# It runs as nobody. /state (the working directory: state files, reject
# files, reports) and /tmp (sort spills) are nobody's, so a named volume
# mounted on /state is writable as it is; a host directory mounted there
# needs `--user "$(id -u):$(id -g)"` (see the README).
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY migrate /migrate
COPY --chown=65534:65534 state/ /state/
COPY --chown=65534:65534 tmp/ /tmp/
WORKDIR /state
USER 65534:65534
ENTRYPOINT ["/migrate"]

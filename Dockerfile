# The migrate tool as a container image: one static binary and the CA
# certificates it needs to reach AWS over TLS, on an empty base. It pulls
# nothing from a registry: `make docker` builds the binary (CGO_ENABLED=0)
# and copies the host's CA bundle into the build context, bin/docker/.
#
#   make docker                         # image pgdynamo/migrate:dev
#   docker run --rm pgdynamo/migrate:dev version
#   docker run --rm -e MIGRATE_PG_URL -e AWS_REGION -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY \
#     -v "$PWD:/work" -w /work pgdynamo/migrate:dev plan --mapping mapping.yaml
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY migrate /migrate
# Run as nobody; state files and reports go where -w points (a volume).
USER 65534:65534
ENTRYPOINT ["/migrate"]

# github.com/pgdynamo/migrate. `make` (or `make help`) lists the targets.
#
# Integration tests get Postgres and DynamoDB Local from containers they start
# themselves (package migratetest). `make test` first makes sure a Docker
# engine runs and the local images exist (scripts/services.sh): that works on
# a machine that reaches no container registry. Elsewhere, use official images:
#   make test MIGRATE_TEST_POSTGRES_IMAGE=postgres:16 MIGRATE_TEST_DYNAMODB_IMAGE=amazon/dynamodb-local

.DEFAULT_GOAL := help
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
PKGS ?= ./...
# -v so that the log shows every integration test and the containers it used;
# `make test TESTFLAGS=` for the short form.
TESTFLAGS ?= -v
BENCH ?= .
SERVICES := bash scripts/services.sh
# The build time `migrate version` reports (Go's build info has only the
# commit's time).
BUILD_TIME := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
# The commit, stamped in as well: Go's own VCS stamp is missing where git
# cannot be asked (a tarball, a build as another user than the clone's).
REVISION := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS := -X main.buildTime=$(BUILD_TIME) -X main.revision=$(REVISION)
GORELEASER_VERSION ?= v2.16.0
# The image `make docker` builds, and the CA bundle it copies in.
IMAGE ?= pgdynamo/migrate:dev
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
# The servers `make up` starts, for test-integration and manual use.
UP_PG_URL := postgres://postgres:postgres@127.0.0.1:55432/postgres?sslmode=disable
UP_DYNAMODB_ENDPOINT := http://127.0.0.1:58000

.PHONY: help build docker release-check test test-integration up down demo lint fmt bench clean

help: ## List the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z_-]+:.*## / { printf "  make %-17s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

build: ## Build bin/migrate
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/migrate ./cmd/migrate

docker: ## Build the image $(IMAGE): a static binary and CA certificates on scratch; pulls nothing
	@test -s $(CA_BUNDLE) || { echo "no CA bundle at $(CA_BUNDLE) (apt-get install ca-certificates, or make docker CA_BUNDLE=...)"; exit 1; }
	mkdir -p bin/docker/state bin/docker/tmp
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o bin/docker/migrate ./cmd/migrate
	cp $(CA_BUNDLE) bin/docker/ca-certificates.crt
	docker build --pull=false -f Dockerfile --label org.opencontainers.image.revision=$(REVISION) -t $(IMAGE) bin/docker
	docker run --rm $(IMAGE) --version

release-check: ## Check .goreleaser.yaml and build every release target into dist/ (goreleaser from the Go module proxy)
	$(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) check
	$(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) build --snapshot --clean

test: ## Run all tests (-race -shuffle=on); integration tests start their own containers
	$(SERVICES) engine images browser
	eval "$$($(SERVICES) env)" && $(GO) test -race -shuffle=on -count=1 -timeout 20m $(TESTFLAGS) $(PKGS)

test-integration: up ## Run all tests against the servers of `make up` instead of new containers
	$(SERVICES) browser
	eval "$$($(SERVICES) env)" && \
	MIGRATE_TEST_PG_URL='$(UP_PG_URL)' MIGRATE_TEST_DYNAMODB_ENDPOINT='$(UP_DYNAMODB_ENDPOINT)' \
	$(GO) test -race -shuffle=on -count=1 -timeout 20m $(TESTFLAGS) $(PKGS)

up: ## Start Postgres on 127.0.0.1:55432 and DynamoDB Local on 127.0.0.1:58000
	if docker compose version >/dev/null 2>&1; then docker compose up -d --wait; else $(SERVICES) up; fi
	@echo "Postgres: $(UP_PG_URL)"
	@echo "DynamoDB: $(UP_DYNAMODB_ENDPOINT)"

down: ## Stop and remove the containers of `make up`
	if docker compose version >/dev/null 2>&1; then docker compose down; else $(SERVICES) down; fi

demo: ## Run the end-to-end demo (scripts/demo.sh)
	bash scripts/demo.sh

lint: ## go vet, and fail if gofmt would change a file
	$(GO) vet $(PKGS)
	@files=$$(gofmt -l .); if [ -n "$$files" ]; then echo "gofmt -w needed on:"; echo "$$files"; exit 1; fi

fmt: ## Format all Go files
	gofmt -w .

bench: ## Run the benchmarks (BENCH=regexp; MIGRATE_BENCH_SCALE, _ROUNDS, _CALLS, _PG_URL: see README), services as for `make test`
	$(SERVICES) engine images
	eval "$$($(SERVICES) env)" && $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 90m $(PKGS)

clean: ## Remove bin/ and coverage files
	rm -rf bin/ coverage.out coverage.html *.coverprofile

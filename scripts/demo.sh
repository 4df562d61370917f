#!/usr/bin/env bash
# make demo: from a clean clone, bring up Postgres and DynamoDB Local, load
# the sample bookstore, then: validate -> plan -> run -> an edit in the
# source -> plan shows the attribute-level change -> run -> prune -> verify
# IDENTICAL -> prove the access patterns -> query.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SCALE=${DEMO_SCALE:-500}
PG=postgres://postgres:postgres@127.0.0.1:55432/postgres?sslmode=disable
ENDPOINT=http://127.0.0.1:58000
# A new table each time, so that every demo starts from an empty table.
TABLE=${DEMO_TABLE:-Bookstore-$(date +%Y%m%d-%H%M%S)}
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

psqlq() { psql "$PG" -Atqc "$1"; }
M=testdata/bookstore.yaml

step "1. validate: the mapping against the source catalog (nothing is read or written)"
bin/migrate validate "$M" --pg "$PG"

step "2. plan: what run would write into the new table $TABLE, and what it costs (also as demo-plan.html)"
bin/migrate plan "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --html demo-plan.html --max-details 3 --color never

step "3. run: migrate into DynamoDB table $TABLE"
bin/migrate run "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --create-table --quiet

customer=$(psqlq "SELECT customer_id FROM orders GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
book=$(psqlq "SELECT book_id FROM order_items GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
order=$(psqlq "SELECT max(order_id) FROM orders")

step "4. The source changes: customer $customer renamed, book $book repriced, order $order deleted"
psqlq "UPDATE customers SET name = 'Ada Lovelace' WHERE customer_id = $customer;
       UPDATE books SET price = price + 1 WHERE book_id = $book;
       DELETE FROM order_items WHERE order_id = $order; DELETE FROM orders WHERE order_id = $order;"

step "5. plan: the attribute-level changes (copies and embeds included) and the stale items"
bin/migrate plan "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --max-details 4 --color never | sed -n '1,4p;/^Changes/,$p'

step "6. run again, then prune the items of the deleted order"
bin/migrate run "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --quiet
bin/migrate prune "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --yes

step "7. verify: per-entity counts and content hashes against the source"
bin/migrate verify "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --color never

step "8. prove: the mapping's access patterns answer as SQL does"
bin/migrate prove "$M" --pg "$PG" --endpoint "$ENDPOINT" --table "$TABLE" --samples 20

step "9. query: a customer's item collection, and the latest OPEN orders over every shard of GSI2"
bin/migrate query "$M" --endpoint "$ENDPOINT" --table "$TABLE" --pk "CUSTOMER#$customer" --desc --limit 4 \
  --attributes PK,SK,type,name,status,total,shipCity
bin/migrate query "$M" --endpoint "$ENDPOINT" --table "$TABLE" --index GSI2 --pk STATUS#OPEN --desc --limit 4 \
  --attributes GSI2PK,GSI2SK,PK,total

printf '\nDone. demo-plan.html is the plan as one page. Try: bin/migrate query %s --endpoint %s --table %s --pk ORDER#1\n' "$M" "$ENDPOINT" "$TABLE"

// Package migratetest runs migrations in tests: a user's test of their own
// mapping, and this project's integration tests. It starts PostgreSQL and
// DynamoDB Local in containers with testcontainers-go (or uses running
// servers named by the environment), and removes them again.
//
// A test of your own mapping:
//
//	func TestMyMapping(t *testing.T) {
//		env := migratetest.New(t)              // a new database, DynamoDB Local, a table name
//		env.ExecFile(t, "testdata/schema.sql") // your schema and a few rows
//		env.Migrate(t, "mapping.yaml")         // engine.Run into env.Table, creating it
//
//		items := env.Query(t, engine.QueryInput{PK: "CUSTOMER#1", SKPrefix: "ORDER#"})
//		var orders []Order                      // your struct, with dynamodbav tags
//		if err := engine.UnmarshalItems(items, &orders); err != nil {
//			t.Fatal(err)
//		}
//		// ... assert on orders
//	}
//
// The lower-level helpers give one service at a time:
//
//	pgURL := migratetest.PostgresURL(t)           // a fresh, empty database
//	migratetest.Exec(t, pgURL, schemaSQL)         // statements run on it
//	endpoint := migratetest.DynamoDBEndpoint(t)   // the shared DynamoDB Local
//	table := migratetest.TableName(t, "orders")   // a table name no other test uses
//	client := migratetest.DynamoDBClient(t, endpoint)
//
// The servers come from environment variables when they are set:
//
//	MIGRATE_TEST_PG_URL             postgres://user:pass@host:port/db URL of a server
//	                                on which the tests may create and drop databases
//	MIGRATE_TEST_DYNAMODB_ENDPOINT  http://host:port of DynamoDB Local (or similar)
//
// Otherwise the first test that asks starts one container of each per test
// process, from these images:
//
//	MIGRATE_TEST_POSTGRES_IMAGE     default postgres:16
//	MIGRATE_TEST_DYNAMODB_IMAGE     default amazon/dynamodb-local
//
// This project's `make test` sets them to images built locally by
// scripts/services.sh, for machines that cannot pull from a registry.
//
// A loaded CI runner can take minutes to start a JVM: each wait for a
// container to serve may take 3 minutes, and a start that fails is tried
// once more, within 5 minutes a service. The error of a start that failed
// names the container, what it waited for, how long, and which deadline
// ran out. It is not tried again in the same test process: the other tests
// that need the service fail (or skip) at once with that error.
//
// Containers never outlive the test process. Main (call it from TestMain)
// removes them when the tests are done; whatever way the process ends
// instead (a panic, a timeout, kill -9), a watchdog process removes them
// right after it. Containers of a process that died before this package
// existed in it are removed by the next test process on the same host.
//
// When a service cannot be had, the test is skipped with a loud reason,
// except under CI=true, where it fails: a CI run that skipped its
// integration tests did not test anything.
package migratetest

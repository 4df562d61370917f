package main

import (
	"os"
	"testing"

	"github.com/pgdynamo/migrate/migratetest"
)

func TestMain(m *testing.M) {
	// DynamoDB Local accepts any credentials; the CLI uses the standard
	// chain, so give it static ones rather than whatever the machine has.
	os.Setenv("AWS_ACCESS_KEY_ID", "test")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	os.Setenv("AWS_REGION", "us-east-1")
	os.Unsetenv("AWS_PROFILE")
	// Tests pass --pg explicitly; a developer's own default must not leak in.
	os.Unsetenv("MIGRATE_PG_URL")
	os.Unsetenv("DATABASE_URL")
	migratetest.Main(m)
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/load"
)

// prepareTarget makes sure the target table can be written before anything
// is read: it creates it with --create-table, and otherwise checks that it
// exists. An unreachable endpoint or missing credentials fail here, within
// seconds, instead of as retries of the first batch.
func prepareTarget(ctx context.Context, client load.TableAPI, cfg load.Config, create bool) error {
	if create {
		return load.EnsureTable(ctx, client, cfg)
	}
	_, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(cfg.Table)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return fmt.Errorf("target table %q does not exist: create it, or pass --create-table to create it with the mapping's keys and indexes", cfg.Table)
	}
	if err != nil {
		return fmt.Errorf("check target table %q: %w", cfg.Table, err)
	}
	return nil
}

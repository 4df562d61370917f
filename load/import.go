package load

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableCreationParameters describes the table EnsureTable would create for
// cfg (the keys and indexes as strings, every index projecting all
// attributes, on-demand billing), in the form ImportTable takes: DynamoDB's
// Import from S3 creates the table it loads, so an imported table and a
// created one are the same table.
func TableCreationParameters(cfg Config) *types.TableCreationParameters {
	in := createTableInput(cfg)
	return &types.TableCreationParameters{
		TableName:              in.TableName,
		AttributeDefinitions:   in.AttributeDefinitions,
		KeySchema:              in.KeySchema,
		BillingMode:            in.BillingMode,
		GlobalSecondaryIndexes: in.GlobalSecondaryIndexes,
	}
}

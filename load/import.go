package load

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableCreationParameters describes the table EnsureTable would create for
// cfg (its keys and their types, the indexes with their projections,
// on-demand billing), in the form ImportTable takes: DynamoDB's Import from
// S3 creates the table it loads, so an imported table and a created one are
// the same table. ImportTable creates no local secondary index: a cfg with
// one is an error.
func TableCreationParameters(cfg Config) (*types.TableCreationParameters, error) {
	var local []string
	for _, ix := range cfg.Indexes {
		if ix.Local {
			local = append(local, ix.Name)
		}
	}
	if len(local) > 0 {
		return nil, fmt.Errorf("load: Import from S3 cannot create local secondary indexes (%s): they exist only if the table is created with them", strings.Join(local, ", "))
	}
	in := createTableInput(cfg.WithDefaults())
	return &types.TableCreationParameters{
		TableName:              in.TableName,
		AttributeDefinitions:   in.AttributeDefinitions,
		KeySchema:              in.KeySchema,
		BillingMode:            in.BillingMode,
		GlobalSecondaryIndexes: in.GlobalSecondaryIndexes,
	}, nil
}

package main

import (
	"cmp"
	"regexp"
	"strings"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
)

// configFlags names the flag that sets each engine Config (and
// load.ClientConfig) field their Validate checks: their problems with
// those fields are the command's usage errors, said in the flags' names.
var configFlags = map[string]string{
	"OnError": "--on-error", "MaxRejects": "--max-rejects", "Readers": "--readers", "RangeRows": "--range-rows",
	"Resume": "--resume", "Fresh": "--fresh", "CreateTable": "--create-table",
	"Writer.MaxWCU": "--max-wcu", "Writer.MinWCU": "--min-wcu", "Writer.Window": "--window",
	"Writer.MaxBatchElapsed": "--max-batch-elapsed", "Writer.OnDuplicate": "--on-duplicate", "Writer.WarmWCU": "--warm-wcu",
	"MaxFanout": "--max-fanout", "OnTruncate": "--on-truncate",
	"Mode": "--compare", "Segments": "--segments", "Concurrency": "--concurrency", "SortMemoryMB": "--sort-memory",
	"Sample": "--sample", "PricePerMillionWCU": "--price-per-million-wcu", "WriteRate": "--write-rate",
	"PricePerGBImport": "--price-per-gb-import", "ImportGBPerHour": "--import-rate", "ImportOverhead": "--import-overhead",
	"Postgres": "--pg", "Endpoint": "--endpoint", "Region": "--region", "S3.Endpoint": "--s3-endpoint",
	"CallTimeout": "--call-timeout", "MaxCallElapsed": "--max-batch-elapsed",
	"Table": "--table", "Index": "--index", "Limit": "--limit", "Attributes": "--attributes",
	"SKPrefix": "--sk-prefix", "SKFrom": "--sk-from", "SKTo": "--sk-to",
	"To": "--to", "S3.Region": "--region", "Compression": "--compression", "FileSize": "--file-size",
	"S3.PartSize": "--part-size", "S3.Concurrency": "--upload-concurrency", "OnDuplicate": "--on-duplicate",
	"Samples": "--samples", "MaxDetails": "--max-details", "Quiet": "--quiet-period", "WaitInactive": "--wait-for-sync",
	"Slot": "--slot", "Publication": "--publication", "StatusEvery": "--status-every", "MaxBatch": "--max-batch",
	"EmbedMax": "--embed-max", "Tables": "--tables", "Writer.Concurrency": "--concurrency",
}

// flagNames overrides configFlags for one command's fields whose values
// came from elsewhere than the flag, such as the environment.
type flagNames map[string]string

// flagName is the name of field's flag (or variable) for a message.
func (n flagNames) flagName(field string) string { return cmp.Or(n[field], configFlags[field]) }

// pgNames says where the source URL came from (see pgURLFrom): --pg,
// an environment variable, or "" when the command does not know.
func pgNames(from string) flagNames {
	switch from {
	case "flag":
		return nil
	case "":
		return flagNames{"Postgres": "the source URL (--pg, $MIGRATE_PG_URL or $DATABASE_URL)"}
	}
	return flagNames{"Postgres": "$" + from}
}

// flagProblem returns the first problem err (a Config's Validate) has
// with a field a flag sets, as cmd's usage error in the flags' names; nil
// if none. Its other problems (no mapping or client yet) are not the
// flags'.
func flagProblem(cmd string, err error) error { return flagProblemIn(cmd, nil, err) }

// flagProblemIn is flagProblem with the fields that names lists said in
// its names instead.
func flagProblemIn(cmd string, names flagNames, err error) error {
	var fe *engine.FieldError
	for _, e := range contract.FieldErrors(err) {
		if configFlags[e.Field] != "" {
			fe = e
			break
		}
	}
	if fe == nil {
		return nil
	}
	name := names.flagName(fe.Field)
	if fe.Env != "" {
		// The value is the environment's: the flag was not given.
		name = "$" + fe.Env
	}
	if strings.HasPrefix(fe.Problem, ":") {
		// A description of the value: "--table: table name ...".
		return usagef("%s: %s%s", cmd, name, inFlagNames(fe.Problem))
	}
	return usagef("%s: %s %s", cmd, name, inFlagNames(fe.Problem))
}

// fieldName matches a Config field name: Mode, Writer.MaxWCU.
var fieldName = regexp.MustCompile(`[A-Z][A-Za-z]*(\.[A-Z][A-Za-z]*)?`)

// inFlagNames replaces the Config field names in msg by their flags,
// outside quotes: a quoted value is the user's and stays as typed.
func inFlagNames(msg string) string {
	parts := strings.Split(msg, `"`)
	for i := 0; i < len(parts); i += 2 {
		parts[i] = fieldName.ReplaceAllStringFunc(parts[i], func(w string) string { return cmp.Or(configFlags[w], w) })
	}
	return strings.Join(parts, `"`)
}

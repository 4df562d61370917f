package main

import (
	"os"

	"github.com/spf13/cobra"
)

// envMapping names the mapping file when neither the argument nor
// --mapping does.
const envMapping = "MIGRATE_MAPPING"

// addMappingFlag registers --mapping, completed with YAML files, and lets
// the command take the mapping file as its one positional argument too.
func addMappingFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "mapping", "", "mapping file (YAML); also the first argument, or $"+envMapping)
	_ = cmd.MarkFlagFilename("mapping", "yaml", "yml")
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
}

// resolveMapping sets *p to the mapping file: the positional argument, else
// --mapping, else $MIGRATE_MAPPING. The flag is marked as set, so that the
// printed resume command names the file.
func resolveMapping(cmd *cobra.Command, args []string, p *string) error {
	switch {
	case len(args) == 1 && *p != "" && *p != args[0]:
		return usagef("%s: the mapping is given twice: %q and --mapping %q", cmd.Name(), args[0], *p)
	case len(args) == 1:
		*p = args[0]
	case *p == "":
		*p = os.Getenv(envMapping)
	}
	if *p != "" && !cmd.Flags().Changed("mapping") {
		_ = cmd.Flags().Set("mapping", *p)
	}
	return nil
}

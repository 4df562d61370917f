package main

import "github.com/spf13/cobra"

func init() { register(newSampleCmd) }

// newSampleCmd groups the commands that build the sample bookstore, which
// the examples, the demo and the tests migrate. They are not part of a
// migration: a real source already has its schema and data.
func newSampleCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Create and fill the sample bookstore database (for trying the tool)",
		Long:  longHelp("sample"),
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return usagef("sample: name a subcommand: schema or seed")
		},
	}
	cmd.AddCommand(newSampleSchemaCmd(g), newSampleSeedCmd(g))
	return cmd
}

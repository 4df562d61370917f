package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/internal/render"
)

func init() { register(newValidateCmd) }

type validateOpts struct {
	sourceFlags
	forSync bool
}

func newValidateCmd(g *globals) *cobra.Command {
	var o validateOpts
	cmd := &cobra.Command{
		Use:   "validate [MAPPING] [--pg URL]",
		Short: "Check a mapping file, and with --pg against the live source catalog",
		Long:  longHelp("validate"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.resolve(cmd, args); err != nil {
				return err
			}
			if o.mapping == "" {
				return usagef("validate: --mapping is required")
			}
			if err := checkPostgres("validate", o.pg, o.pgFrom); err != nil {
				return err
			}
			url := o.pg
			if url == "" {
				m, err := engine.LoadMapping(o.mapping)
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "%s: syntax ok (%s); pass --pg to check it against the source database\n", o.mapping, render.Plural(len(m.Entities), "entity"))
				return nil
			}
			// The file's problems and the catalog's, in one pass.
			m, proof, ws, err := engine.ValidateFile(cmd.Context(), o.mapping, url)
			if err != nil {
				return err
			}
			// Warnings are advice: printed, never a failure.
			if ws != nil {
				fmt.Fprintln(g.stderr, ws.Error())
			}
			fmt.Fprintf(g.stdout, "%s: ok (%s checked against the source catalog; %s)\n", o.mapping, render.Plural(len(m.Entities), "entity"), render.Plural(len(ws), "warning"))
			_ = render.KeyProof(g.stdout, proof)
			return checkForSync(cmd.Context(), g, m, url, o.forSync)
		},
	}
	o.register(cmd)
	cmd.Flags().BoolVar(&o.forSync, "for-sync", false, "fail (exit 2) when the source cannot feed sync, instead of noting why")
	return cmd
}

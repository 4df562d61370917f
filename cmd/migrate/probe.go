package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func init() { register(newProbeCmd) }

// newProbeCmd is the health check of a container whose image holds nothing
// but this binary (no curl, no shell): GET a URL, exit 0 on 200.
func newProbeCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "probe URL [--timeout D]",
		Short: "GET a health URL (/healthz, /readyz of --metrics-addr); exit 0 on 200: a container health check",
		Long:  longHelp("probe"),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.HasPrefix(args[0], "http://") && !strings.HasPrefix(args[0], "https://") {
				return usagef("probe: %q is not an http:// or https:// URL", args[0])
			}
			c := http.Client{Timeout: timeout}
			res, err := c.Get(args[0])
			if err != nil {
				return fmt.Errorf("probe: %w", err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
			fmt.Fprintf(g.stdout, "%d %s\n", res.StatusCode, first)
			if res.StatusCode != http.StatusOK {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

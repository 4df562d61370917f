package main

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/metrics"
)

// metricsOpts is --metrics-addr of the long commands (run, export, sync)
// and sync's --ready-lag.
type metricsOpts struct {
	addr     string
	readyLag time.Duration
}

const metricsAddrUsage = "serve Prometheus metrics on /metrics, and /healthz and /readyz, at this address (\":9464\" binds to 127.0.0.1; name a host, e.g. 0.0.0.0:9464, to listen beyond this machine)"

func (m *metricsOpts) register(f *pflag.FlagSet, sync bool) {
	f.StringVar(&m.addr, "metrics-addr", "", metricsAddrUsage)
	if sync {
		f.DurationVar(&m.readyLag, "ready-lag", 30*time.Second, "the lag up to which /readyz says the sync is ready")
	}
}

func (m *metricsOpts) validate(cmd string) error {
	if m.addr != "" {
		if _, err := metrics.ListenAddr(m.addr); err != nil {
			return usagef("%s: %v", cmd, err)
		}
	}
	if m.readyLag < 0 {
		return usagef("%s: --ready-lag must not be negative", cmd)
	}
	return nil
}

// serve starts the metrics listener when --metrics-addr is set, and
// returns the state that observers feed (nil when not set) and the
// function that stops the listener.
func (m *metricsOpts) serve(g *globals, cfg metrics.Config) (*metrics.State, func(), error) {
	if m.addr == "" {
		return nil, func() {}, nil
	}
	cfg.ReadyLag = m.readyLag
	st := metrics.NewState(cfg)
	srv, err := metrics.Start(m.addr, st, currentVersion().Short("migrate"))
	if err != nil {
		return nil, nil, err
	}
	g.logger.Info("serving metrics", "url", "http://"+srv.Addr()+"/metrics", "health", "/healthz", "ready", "/readyz")
	return st, func() { _ = srv.Close(context.Background()) }, nil
}

// observeRun feeds a run's or an export's progress to st as well.
func observeRun(obs contract.Observer, st *metrics.State) contract.Observer {
	if st == nil {
		return obs
	}
	return metrics.WrapRun(obs, st)
}

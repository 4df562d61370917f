package faultproxy

import (
	"net/http"
	"time"
)

// hold holds a call for as long as Config.Hold says, and reports whether
// to go on handling it (false: its client gave up meanwhile).
func (p *Proxy) hold(r *http.Request, op string) bool {
	if p.cfg.Hold == nil {
		return true
	}
	p.mu.Lock()
	n := p.calls[op]
	p.calls[op]++
	p.mu.Unlock()
	d := p.cfg.Hold(op, n)
	if d <= 0 {
		return true
	}
	p.mu.Lock()
	p.stats.Held++
	p.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		p.mu.Lock()
		p.stats.Abandoned++
		p.mu.Unlock()
		return false
	}
}

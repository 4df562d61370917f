//go:build !unix

package load

import "time"

// cpuTime is not measured here: the benchmarks report no CPU figures.
func cpuTime() time.Duration { return 0 }

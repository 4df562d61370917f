package migratetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// A test process can end without running Main's cleanup: a test that calls
// os.Exit or panics, `go test -timeout`, kill -9. Without a reaper container
// (Ryuk cannot be pulled everywhere) its containers would be left running.
// So the first container started spawns a watchdog: the test binary itself,
// run again with envWatchdog set, in its own process group, reading the IDs
// of the containers to remove from a pipe. When the test process ends, by
// whatever path, the pipe closes and the watchdog removes them. Main removes
// them first on the normal path; the watchdog then finds nothing left.

const envWatchdog = "MIGRATETEST_WATCHDOG"

func init() {
	if os.Getenv(envWatchdog) == "1" {
		os.Exit(runWatchdog(os.Stdin))
	}
}

var watchdog struct {
	once sync.Once
	mu   sync.Mutex
	w    io.WriteCloser // nil when the watchdog could not be started
}

// watch hands a container to the watchdog, starting it on first use. Best
// effort: without a watchdog, Main and the next run's reapOrphans remain.
func watch(id string) {
	watchdog.once.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			return
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), envWatchdog+"=1")
		// Its own process group: a Ctrl-C of the test must not stop it
		// before it cleaned up. No stdout or stderr: `go test` waits for
		// those to close.
		cmd.SysProcAttr = ownProcessGroup()
		in, err := cmd.StdinPipe()
		if err != nil {
			return
		}
		if err := cmd.Start(); err != nil {
			return
		}
		go func() { _ = cmd.Wait() }()
		watchdog.w = in
	})
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.w != nil {
		_, _ = fmt.Fprintln(watchdog.w, id)
	}
}

// runWatchdog reads container IDs until its input closes (the test process
// ended), then removes those containers.
func runWatchdog(in io.Reader) int {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var ids []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 1
	}
	defer cli.Close()
	for _, id := range ids {
		// Already gone after Main's cleanup: nothing to do.
		_, _ = cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
	return 0
}

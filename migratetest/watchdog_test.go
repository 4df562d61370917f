package migratetest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

const envWatchdogChild = "MIGRATETEST_WATCHDOG_TEST_CHILD"

// TestWatchdogRemovesContainers runs this test binary as a child that
// starts a container and then exits without Main's cleanup, the way a
// panicking or killed test process does, and checks that the container is
// gone soon after.
func TestWatchdogRemovesContainers(t *testing.T) {
	if os.Getenv(envWatchdogChild) == "1" {
		DynamoDBEndpoint(t)
		os.Stdout.WriteString("container " + dynamo.container.GetContainerID() + "\n")
		os.Exit(3) // no cleanup, as after a panic or a timeout
	}
	if os.Getenv(EnvDynamoDBEndpoint) != "" {
		t.Skip("the services come from the environment: no container to watch")
	}
	DynamoDBEndpoint(t) // skips (or fails under CI) without Docker, like every integration test

	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogRemovesContainers$", "-test.count=1")
	cmd.Env = append(os.Environ(), envWatchdogChild+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "container "); ok {
			id = rest
		}
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("child: %v, want exit status 3", err)
	}
	if id == "" {
		t.Fatal("the child printed no container ID")
	}

	ctx := t.Context()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(cleanupTimeout)
	for {
		_, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "no such container") {
			return // removed
		}
		if time.Now().After(deadline) {
			_, _ = cli.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true})
			t.Fatalf("container %s still exists %v after its test process exited (inspect: %v)", id, cleanupTimeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

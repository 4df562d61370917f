package main

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/migratetest"
)

// `make docker` builds the tool's image without a registry: a static
// binary and the CA bundle on scratch, run as nobody; the binary runs in it
// and reports its build time.
func TestDockerImage(t *testing.T) {
	t.Parallel()
	image := dockerImage(t)
	run := func(name string, args ...string) string { t.Helper(); return runTool(t, name, args...) }

	version := run("docker", "run", "--rm", "--network", "none", image, "version")
	if !strings.Contains(version, "platform  linux/") || !strings.Contains(version, "built     20") ||
		!regexp.MustCompile(`revision  [0-9a-f]{40}`).MatchString(version) {
		t.Errorf("migrate version in the image (it must name its commit):\n%s", version)
	}
	head := strings.TrimSpace(run("git", "rev-parse", "HEAD"))
	if short := run("docker", "run", "--rm", "--network", "none", image, "--version"); !strings.Contains(short, head[:12]) {
		t.Errorf("--version in the image does not name commit %s: %s", head[:12], short)
	}
	if user := strings.TrimSpace(run("docker", "image", "inspect", "--format", "{{.Config.User}}", image)); user != "65534:65534" {
		t.Errorf("the image runs as %q, want nobody (65534:65534)", user)
	}

	// Its file system: the binary and the CA bundle, nothing else of ours.
	id := strings.TrimSpace(run("docker", "create", image))
	defer exec.Command("docker", "rm", id).Run()
	export := exec.CommandContext(t.Context(), "docker", "export", id)
	pipe, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	var files []string
	tr := tar.NewReader(pipe)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && h.Size > 0 {
			files = append(files, h.Name)
		}
	}
	if err := export.Wait(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if want := []string{"etc/ssl/certs/ca-certificates.crt", "migrate"}; !slices.Equal(files, want) {
		t.Errorf("files in the image: %v, want %v", files, want)
	}
}

var (
	imageMu    sync.Mutex
	imageName  string
	imageUsers int
)

// dockerImage builds the image with `make docker`, once for the tests
// that use it at the same time; the last one to finish removes it.
func dockerImage(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a container image")
	}
	if err := exec.CommandContext(t.Context(), "docker", "info").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Docker engine: under CI=true the image must be built (scripts/services.sh engine): %v", err)
		}
		t.Skipf("SKIPPED: no Docker engine (%v); under CI=true this fails", err)
	}
	imageMu.Lock()
	defer imageMu.Unlock()
	if imageName == "" {
		suffix := make([]byte, 4)
		rand.Read(suffix)
		image := "pgdynamo/migrate-test:" + hex.EncodeToString(suffix)
		out, err := exec.Command("make", "-C", "../..", "docker", "IMAGE="+image).CombinedOutput()
		if err != nil {
			t.Fatalf("make docker: %v\n%s", err, out)
		}
		t.Logf("make docker:\n%s", out)
		imageName = image
	}
	imageUsers++
	t.Cleanup(func() {
		imageMu.Lock()
		defer imageMu.Unlock()
		if imageUsers--; imageUsers == 0 {
			exec.Command("docker", "rmi", "-f", imageName).Run()
			imageName = ""
		}
	})
	return imageName
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String()
}

// The image runs as the README and the compose service run it: run with a
// host directory as the working directory (--user), and sync as a
// service with its state on a named volume, its health checked by the
// image's own probe, stopped by SIGTERM within its grace period.
func TestDockerService(t *testing.T) {
	t.Parallel()
	image := dockerImage(t)
	endpoint := migratetest.DynamoDBEndpoint(t)
	s := newSyncSource(t, "", endpoint, 20)
	s.exec(t, "ALTER TABLE orders REPLICA IDENTITY FULL; ALTER TABLE addresses REPLICA IDENTITY FULL")
	run := func(args ...string) string { t.Helper(); return runTool(t, "docker", args...) }
	mappingFile, err := filepath.Abs(bookstoreMapping)
	if err != nil {
		t.Fatal(err)
	}
	awsEnv := []string{"-e", "AWS_REGION=us-east-1", "-e", "AWS_ACCESS_KEY_ID=local", "-e", "AWS_SECRET_ACCESS_KEY=local", "-e", "AWS_ENDPOINT_URL_DYNAMODB=" + endpoint}

	// The README's line for run: the working directory a host directory.
	work := t.TempDir()
	data, err := os.ReadFile(mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "mapping.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	runTable := s.table + "-run"
	args := append([]string{"run", "--rm", "--network", "host", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"-e", "MIGRATE_PG_URL=" + s.pg}, awsEnv...)
	args = append(args, "-v", work+":/work", "-w", "/work", image, "run", "--mapping", "mapping.yaml", "--table", runTable, "--create-table", "--quiet")
	out := run(args...)
	if !strings.Contains(out, "TOTAL") {
		t.Errorf("run in the image:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(work, ".migrate", runTable+".state.json")); err != nil {
		t.Errorf("the run's state file is not in the working directory: %v", err)
	}

	// sync as the compose service runs it, state on a named volume.
	volume := "migrate-test-" + strings.ToLower(s.table)
	run("volume", "create", volume)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	addr := freeAddr(t)
	name := "migrate-sync-" + strings.ToLower(s.table)
	args = append([]string{"run", "-d", "--name", name, "--network", "host", "-e", "MIGRATE_PG_URL=" + s.pg}, awsEnv...)
	args = append(args, "-v", volume+":/state", "-v", mappingFile+":/config/mapping.yaml:ro", image,
		"sync", "--mapping=/config/mapping.yaml", "--table", s.table, "--create-table", "--metrics-addr="+addr, "--log-format=json")
	run(args...)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	waitFor(t, "the image's probe of /readyz", 2*time.Minute, func() bool {
		return exec.Command("docker", "exec", name, "/migrate", "probe", "http://"+addr+"/readyz").Run() == nil
	})
	if code, body := scrape(addr, "/metrics"); code != 200 || !strings.Contains(body, "migrate_sync_streaming 1") {
		t.Errorf("/metrics of the container: %d", code)
	}
	began := time.Now()
	run("stop", "-t", "60", name)
	took := time.Since(began)
	exit := strings.TrimSpace(run("inspect", "--format", "{{.State.ExitCode}}", name))
	if exit != strconv.Itoa(exitInterrupted) || took > 20*time.Second {
		t.Errorf("docker stop: exit %s after %v, want %d within 20 s\n%s", exit, took, exitInterrupted, run("logs", name))
	}
	// The state file stayed on the volume: a new container sees it.
	status := run("run", "--rm", "--network", "host", "-v", volume+":/state", "-v", mappingFile+":/config/mapping.yaml:ro", image,
		"sync", "status", "--mapping=/config/mapping.yaml", "--table", s.table, "--pg", s.pg)
	if !strings.Contains(status, "initial load complete into table "+s.table) || !strings.Contains(status, "inactive") {
		t.Errorf("sync status from the volume:\n%s", status)
	}
}

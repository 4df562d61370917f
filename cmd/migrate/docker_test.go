package main

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// `make docker` builds the tool's image without a registry: a static
// binary and the CA bundle on scratch, run as nobody; the binary runs in it
// and reports its build time.
func TestDockerImage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a container image")
	}
	if err := exec.CommandContext(t.Context(), "docker", "info").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Docker engine: under CI=true the image must be built (scripts/services.sh engine): %v", err)
		}
		t.Skipf("SKIPPED: no Docker engine (%v); under CI=true this fails", err)
	}
	suffix := make([]byte, 4)
	rand.Read(suffix)
	image := "pgdynamo/migrate-test:" + hex.EncodeToString(suffix)
	run := func(name string, args ...string) string {
		t.Helper()
		var o, e bytes.Buffer
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, o.String(), e.String())
		}
		return o.String()
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", image).Run() })
	out := run("make", "-C", "../..", "docker", "IMAGE="+image)
	t.Logf("make docker:\n%s", out)

	version := run("docker", "run", "--rm", "--network", "none", image, "version")
	if !strings.Contains(version, "platform  linux/") || !strings.Contains(version, "built     20") {
		t.Errorf("migrate version in the image:\n%s", version)
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

package deploy

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Every document of the manifest decodes strictly, as `kubectl apply
// --dry-run=client` checks it with a cluster at hand (an unknown or
// misspelt field fails) into its API type, and the sync Deployment has
// what running sync for weeks needs.
func TestKubernetesManifest(t *testing.T) {
	data, err := os.ReadFile("kubernetes/sync.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var dep *appsv1.Deployment
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("document: %v", err)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			dep = &appsv1.Deployment{}
			obj = dep
		case "v1 Service":
			obj = &corev1.Service{}
		case "v1 PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		case "v1 ServiceAccount":
			obj = &corev1.ServiceAccount{}
		default:
			t.Fatalf("unexpected kind %s %s", head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Errorf("%s: %v", head.Kind, err)
		}
		kinds = append(kinds, head.Kind)
	}
	slices.Sort(kinds)
	if want := []string{"Deployment", "PersistentVolumeClaim", "Service", "ServiceAccount"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if dep == nil {
		t.Fatal("no Deployment")
	}
	spec := dep.Spec.Template.Spec
	if *dep.Spec.Replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("two syncs could overlap: replicas %d, strategy %s", *dep.Spec.Replicas, dep.Spec.Strategy.Type)
	}
	c := spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"sync", "--metrics-addr=0.0.0.0:9464", "--log-format=json", "--max-slot-wal="} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	var state bool
	for _, m := range c.VolumeMounts {
		state = state || m.MountPath == "/state"
	}
	if !state {
		t.Error("the state file is not on a volume (/state)")
	}
	if spec.TerminationGracePeriodSeconds == nil || *spec.TerminationGracePeriodSeconds < 30 {
		t.Error("no grace period for sync to confirm its position on SIGTERM")
	}
	if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
		t.Error("the pod may run as root")
	}
	for _, e := range c.Env {
		if e.Name == "MIGRATE_PG_URL" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Error("the source URL is not taken from a Secret")
		}
	}
}

// The check above would catch a misspelt field.
func TestStrictDecodeCatchesTypos(t *testing.T) {
	doc := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 1\n")
	if err := yaml.UnmarshalStrict(doc, &appsv1.Deployment{}); err == nil || !strings.Contains(err.Error(), "replica") {
		t.Errorf("a misspelt field decoded: %v", err)
	}
}

// The compose file's sync service has what the README promises: the
// metrics port, a health check by the image's probe, restart on failure,
// its state on a named volume and time to stop.
func TestComposeSyncService(t *testing.T) {
	data, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Profiles    []string
			Image       string
			Command     []string
			Volumes     []string
			Ports       []string
			Restart     string
			StopSignal  string `json:"stop_signal"`
			StopGrace   string `json:"stop_grace_period"`
			Healthcheck struct{ Test []string }
		}
		Volumes map[string]any
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	s, ok := compose.Services["sync"]
	if !ok {
		t.Fatal("no sync service")
	}
	cmd := strings.Join(s.Command, " ")
	for _, want := range []string{"sync", "--metrics-addr=0.0.0.0:9464", "--log-format=json", "--max-slot-wal="} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	if got := strings.Join(s.Healthcheck.Test, " "); got != "CMD /migrate probe http://127.0.0.1:9464/healthz" {
		t.Errorf("health check %q", got)
	}
	if !strings.HasPrefix(s.Restart, "on-failure") || s.StopSignal != "SIGTERM" || s.StopGrace == "" {
		t.Errorf("restart %q, stop signal %q, grace %q", s.Restart, s.StopSignal, s.StopGrace)
	}
	if !slices.Contains(s.Volumes, "sync-state:/state") {
		t.Errorf("volumes %v", s.Volumes)
	}
	if _, ok := compose.Volumes["sync-state"]; !ok {
		t.Error("the volume sync-state is not declared")
	}
	if !slices.Contains(s.Ports, "127.0.0.1:9464:9464") {
		t.Errorf("ports %v: want the metrics port on 127.0.0.1", s.Ports)
	}
	if !slices.Contains(s.Profiles, "sync") {
		t.Errorf("profiles %v: `make up` would start it", s.Profiles)
	}
}

package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRedactEndpoint(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"":                                       "",
		"http://127.0.0.1:8000":                  "http://127.0.0.1:8000",
		"http://127.0.0.1:8000/":                 "http://127.0.0.1:8000",
		"HTTP://LocalHost:8000":                  "http://localhost:8000",
		"https://user:s3cret@ddb.example.com/x/": "https://ddb.example.com/x",
		"https://ddb.example.com?token=s3cret#f": "https://ddb.example.com",
		"user:s3cret@host:8000":                  "host:8000",
	}
	for in, want := range cases {
		if got := RedactEndpoint(in); got != want {
			t.Errorf("RedactEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	t.Parallel()
	created := time.Date(2024, 5, 1, 10, 0, 0, 268_000_000, time.UTC)
	then := Target{Endpoint: "http://127.0.0.1:8000", Region: "us-east-1",
		TableARN: "arn:aws:dynamodb:us-east-1:123456789012:table/Shop", TableID: "4f2a", CreatedAt: created}
	change := func(f func(*Target)) *Target {
		t := then
		f(&t)
		return &t
	}
	cases := []struct {
		name  string
		state *Target
		now   *Target
		want  []string // substrings of the error; nil: no error
	}{
		{"same table", &then, &then, nil},
		{"same instant, other zone", &then, change(func(t *Target) { t.CreatedAt = created.In(time.FixedZone("x", 3600)) }), nil},
		{"same endpoint written differently", &then, change(func(t *Target) { t.Endpoint = "HTTP://127.0.0.1:8000/" }), nil},
		{"table deleted", &then, nil, []string{`table "Shop" does not exist any more`}},
		{"table re-created", &then, change(func(t *Target) { t.TableID = "9c1d"; t.CreatedAt = created.Add(time.Hour) }), []string{
			`table ID: "4f2a" then, "9c1d" now`,
			"table created: 2024-05-01T10:00:00.268Z then, 2024-05-01T11:00:00.268Z now (it was deleted and created again)"}},
		// DynamoDB Local has no table ID, and a restart loses its tables:
		// the creation time tells.
		{"DynamoDB Local restarted", change(func(t *Target) { t.TableID = "" }), change(func(t *Target) { t.TableID = ""; t.CreatedAt = created.Add(time.Minute) }),
			[]string{"table created: "}},
		{"other endpoint", &then, change(func(t *Target) { t.Endpoint = "http://127.0.0.1:9000" }),
			[]string{`endpoint: "http://127.0.0.1:8000" then, "http://127.0.0.1:9000" now`}},
		{"other region", &then, change(func(t *Target) {
			t.Region = "eu-west-1"
			t.TableARN = "arn:aws:dynamodb:eu-west-1:123456789012:table/Shop"
		}),
			[]string{`region: "us-east-1" then, "eu-west-1" now`, "table ARN: "}},
		{"default endpoint then", change(func(t *Target) { t.Endpoint = "" }), &then,
			[]string{`endpoint: (none) then, "http://127.0.0.1:8000" now`}},
		{"no target recorded", nil, &then, []string{`the state file does not record which table "Shop" it was written to`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &State{Table: "Shop", Target: tc.state}
			err := s.CheckTarget(tc.now)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckTarget: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTargetChanged) {
				t.Fatalf("CheckTarget = %v, want ErrTargetChanged", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// The target survives a save and a load, and the file holds no
// credentials from the endpoint.
func TestTargetSaved(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.json")
	target := Target{Endpoint: RedactEndpoint("https://key:s3cret@ddb.example.com"), Region: "us-east-1",
		TableARN: "arn:aws:dynamodb:us-east-1:1:table/Shop", TableID: "4f2a", CreatedAt: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)}
	if err := Save(path, &State{Table: "Shop", Target: &target}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cret") {
		t.Errorf("state file holds a secret:\n%s", data)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Target, &target) || s.CheckTarget(&target) != nil {
		t.Errorf("target after a round trip: %+v, want %+v", s.Target, target)
	}
}

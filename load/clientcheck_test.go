package load

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/contract"
)

// loadFieldErrors is each FieldError of a Validate's errors, by field.
func loadFieldErrors(err error) map[string]*FieldError {
	out := map[string]*FieldError{}
	for _, fe := range contract.FieldErrors(err) {
		out[fe.Field] = fe
	}
	return out
}

// Each bad value is a FieldError naming the field (and the environment
// variable it came from), an ErrConfig, all reported at once; good values
// and defaults pass. Not parallel: it sets the SDK's endpoint variables.
func TestClientConfigFieldErrors(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "")
	const secret = "hunter2secret"
	for _, tc := range []struct {
		name        string
		cc          ClientConfig
		env         map[string]string
		field, env2 string // env2: the FieldError's Env
		msg         string
	}{
		{"endpoint scheme", ClientConfig{Endpoint: "ftp://x"}, nil, "Endpoint", "", `load: Endpoint must be an absolute http:// or https:// URL, such as http://localhost:8000, not "ftp://x"`},
		{"endpoint no host", ClientConfig{Endpoint: "localhost:8000"}, nil, "Endpoint", "", `not "localhost:8000"`},
		{"endpoint password", ClientConfig{Endpoint: "http://u:" + secret + "@host:8000x"}, nil, "Endpoint", "", "not the value given (not shown: it may hold a password)"},
		{"endpoint env", ClientConfig{}, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "nope"}, "Endpoint", "AWS_ENDPOINT_URL_DYNAMODB", `load: $AWS_ENDPOINT_URL_DYNAMODB must be an absolute http:// or https:// URL, such as http://localhost:8000, not "nope"`},
		{"endpoint generic env", ClientConfig{}, map[string]string{"AWS_ENDPOINT_URL": "http://u:" + secret + "@%zz"}, "Endpoint", "AWS_ENDPOINT_URL", "not shown"},
		{"region", ClientConfig{Region: "eu west"}, nil, "Region", "", `load: Region must be a region name such as eu-west-1, not "eu west"`},
		{"region dash", ClientConfig{Region: "-eu"}, nil, "Region", "", `not "-eu"`},
		{"region long", ClientConfig{Region: strings.Repeat("a", 64)}, nil, "Region", "", "must be a region name"},
		{"call timeout", ClientConfig{CallTimeout: -time.Second}, nil, "CallTimeout", "", "load: CallTimeout must be positive (default 10s)"},
		{"elapsed", ClientConfig{MaxCallElapsed: -time.Second}, nil, "MaxCallElapsed", "", "load: MaxCallElapsed must not be negative (0 = the default, 2m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			err := tc.cc.Validate()
			fe := loadFieldErrors(err)[tc.field]
			switch {
			case fe == nil:
				t.Fatalf("Validate = %v, want a FieldError of %s", err, tc.field)
			case fe.Env != tc.env2 || !strings.Contains(fe.Error(), tc.msg):
				t.Errorf("FieldError = %+v (%q), want Env %q and %q", fe, fe.Error(), tc.env2, tc.msg)
			case !errors.Is(err, contract.ErrConfig):
				t.Errorf("not an ErrConfig: %v", err)
			case strings.Contains(err.Error(), secret):
				t.Errorf("the message shows the password: %v", err)
			}
		})
	}
	// Every problem at once.
	if fe := loadFieldErrors(ClientConfig{Endpoint: "x", Region: "a b", CallTimeout: -1, MaxCallElapsed: -1}.Validate()); len(fe) != 4 {
		t.Errorf("want 4 field errors at once, got %v", fe)
	}
	for _, cc := range []ClientConfig{{}, {Endpoint: "http://localhost:8000", Region: "eu-west-1"}, {Endpoint: "https://dynamodb.eu-west-1.amazonaws.com", Region: "local"}, (ClientConfig{}).WithDefaults()} {
		if err := cc.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", cc, err)
		}
	}
	t.Run("ignored environment", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "nope")
		t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
		if err := (ClientConfig{}).Validate(); err != nil {
			t.Errorf("an ignored environment endpoint is checked: %v", err)
		}
	})
	t.Run("flag over environment", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "nope")
		if err := (ClientConfig{Endpoint: "http://localhost:8000"}).Validate(); err != nil {
			t.Errorf("the environment is checked though Endpoint is set: %v", err)
		}
	})
}

package contract_test

import (
	"errors"
	"testing"

	"github.com/pgdynamo/migrate/contract"
)

func TestFieldError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  contract.FieldError
		want string
	}{
		{contract.FieldError{Verb: "run", Field: "OnError", Problem: `must be "fail" or "reject", not "x"`}, `run: OnError must be "fail" or "reject", not "x"`},
		{contract.FieldError{Verb: "run", Field: "Table", Problem: ": table name \"a\" is too short"}, `run: Table: table name "a" is too short`},
		{contract.FieldError{Verb: "load", Field: "Endpoint", Env: "AWS_ENDPOINT_URL_DYNAMODB", Problem: "must be an absolute URL"}, "load: $AWS_ENDPOINT_URL_DYNAMODB must be an absolute URL"},
	} {
		err := error(&tc.err)
		if err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", err.Error(), tc.want)
		}
		if !errors.Is(err, contract.ErrConfig) {
			t.Errorf("%q is not an ErrConfig", err)
		}
	}
}

// FieldErrors finds every FieldError of joined errors, nested joins
// included, in order, and nothing else.
func TestFieldErrors(t *testing.T) {
	t.Parallel()
	a := &contract.FieldError{Verb: "run", Field: "A", Problem: "is bad"}
	b := &contract.FieldError{Verb: "run", Field: "B", Problem: "is bad"}
	err := errors.Join(a, errors.New("run: not a field"), errors.Join(nil, b))
	got := contract.FieldErrors(err)
	if len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("FieldErrors = %v, want [A B]", got)
	}
	if got := contract.FieldErrors(nil); got != nil {
		t.Errorf("FieldErrors(nil) = %v", got)
	}
}

package checkpoint

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ErrTargetChanged is wrapped when the table a resume would write to is not
// the one the state file's positions were written to: another endpoint or
// region, or a table of the same name deleted and created again (a restarted
// DynamoDB Local loses its tables). Resuming would skip every checkpointed
// row and leave them missing from the new table.
var ErrTargetChanged = errors.New("checkpoint: the target table is not the one this state file was written to")

// Target identifies the DynamoDB table a run writes to, as DescribeTable
// describes it. Region and TableName may be equal for two different
// tables; TableID (AWS only, DynamoDB Local has none) and CreatedAt tell a
// re-created table from the original. It holds no secret: Endpoint is
// stored without user information or query (see RedactEndpoint).
type Target struct {
	// Endpoint is the endpoint URL given to the run, "" for the SDK's
	// default endpoint of the region.
	Endpoint  string    `json:"endpoint,omitempty"`
	Region    string    `json:"region"`
	TableARN  string    `json:"tableArn,omitempty"`
	TableID   string    `json:"tableId,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// RedactEndpoint returns an endpoint URL fit to store: without user
// information, query or fragment (where credentials could hide), and
// without a trailing slash, so that equal endpoints compare equal. Text
// that is not a URL is kept only up to any "@".
func RedactEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		if i := strings.LastIndexByte(endpoint, '@'); i >= 0 {
			endpoint = endpoint[i+1:]
		}
		return strings.TrimSuffix(endpoint, "/")
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimSuffix(u.String(), "/")
}

// Differences lists, one per line, how now differs from t: empty when they
// name the same table. Timestamps are compared as instants.
func (t Target) Differences(now Target) []string {
	var out []string
	diff := func(what, then, now string) {
		if then != now {
			out = append(out, fmt.Sprintf("%s: %s then, %s now", what, quoteOrNone(then), quoteOrNone(now)))
		}
	}
	diff("endpoint", RedactEndpoint(t.Endpoint), RedactEndpoint(now.Endpoint))
	diff("region", t.Region, now.Region)
	diff("table ARN", t.TableARN, now.TableARN)
	diff("table ID", t.TableID, now.TableID)
	if !t.CreatedAt.Equal(now.CreatedAt) {
		out = append(out, fmt.Sprintf("table created: %s then, %s now (it was deleted and created again)",
			t.CreatedAt.UTC().Format(time.RFC3339Nano), now.CreatedAt.UTC().Format(time.RFC3339Nano)))
	}
	return out
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

// CheckTarget reports whether s may be resumed into the table now
// describes; now is nil when that table does not exist. A state file that
// records no target (written before targets were recorded) cannot be
// trusted either. The error wraps ErrTargetChanged and says what differs.
func (s *State) CheckTarget(now *Target) error {
	switch {
	case now == nil:
		return fmt.Errorf("%w: table %q does not exist any more; its checkpointed rows would be skipped and never written", ErrTargetChanged, s.Table)
	case s.Target == nil:
		return fmt.Errorf("%w: the state file does not record which table %q it was written to", ErrTargetChanged, s.Table)
	}
	if d := s.Target.Differences(*now); len(d) > 0 {
		return fmt.Errorf("%w: table %q: %s", ErrTargetChanged, s.Table, strings.Join(d, "; "))
	}
	return nil
}

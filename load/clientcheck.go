package load

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/pgdynamo/migrate/contract"
)

// FieldError is a problem with the value of a ClientConfig field (see
// contract.FieldError); its Verb is "load".
type FieldError = contract.FieldError

// EndpointProblem says what is wrong with v as a service endpoint: it must
// be an absolute http or https URL with a host. "" when nothing is, or v
// is "" (the AWS configuration's endpoint). The message shows v without
// the password of its user info, and not at all when it cannot be parsed
// and has user info.
func EndpointProblem(v string) string {
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" && u.Opaque == "" {
		return ""
	}
	return "must be an absolute http:// or https:// URL, such as http://localhost:8000, not " + shownURL(v)
}

// shownURL is v for a message: without the password of its user info, and
// not at all when it cannot be parsed and has user info.
func shownURL(v string) string {
	if u, err := url.Parse(v); err == nil {
		return fmt.Sprintf("%q", u.Redacted())
	}
	if strings.Contains(v, "@") {
		return "the value given (not shown: it may hold a password)"
	}
	return fmt.Sprintf("%q", v)
}

// EnvEndpoint is the endpoint the SDK takes from the environment: the
// first of vars that is set (such as AWS_ENDPOINT_URL_DYNAMODB, then
// AWS_ENDPOINT_URL) and its value; "", "" when none is, or when
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS tells the SDK to ignore them.
func EnvEndpoint(vars ...string) (name, value string) {
	if ignore, _ := strconv.ParseBool(os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")); ignore {
		return "", ""
	}
	for _, v := range vars {
		if val := os.Getenv(v); val != "" {
			return v, val
		}
	}
	return "", ""
}

// RegionProblem says what is wrong with a region name: the SDK requires a
// DNS label (letters, digits and '-', 1 to 63). No list of known regions:
// new regions and local engines' names must pass. "" passes.
func RegionProblem(region string) string {
	if region == "" {
		return ""
	}
	ok := len(region) <= 63 && region[0] != '-' && region[len(region)-1] != '-'
	for _, r := range region {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("must be a region name such as eu-west-1, not %q", region)
}

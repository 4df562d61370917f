package mapping

import (
	"regexp"
	"strconv"
	"strings"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrPos extracts the line go.yaml.in/yaml/v3 reports in a syntax error; the
// library gives no column, so the column is 1.
func yamlErrPos(err error) Pos {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return Pos{n, 1}
	}
	return Pos{1, 1}
}

func yamlErrMsg(err error) string {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return "invalid YAML: " + m[2]
	}
	return "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
}

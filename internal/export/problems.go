package export

import (
	"fmt"

	"github.com/pgdynamo/migrate/internal/capacity"
)

// The rules for an export's settings, each said as the rest of a sentence
// that begins with the name of what sets the value (a Config field, a
// flag): TargetConfig, engine.ExportConfig and the command line say the
// same. Each returns "" when the value is good.

// CompressionProblem is what is wrong with a compression name.
func CompressionProblem(c string) string {
	if _, ok := extension[c]; ok {
		return ""
	}
	return fmt.Sprintf("must be %s, %s or %s, not %q", CompressionGzip, CompressionZstd, CompressionNone, c)
}

// FileSizeProblem is what is wrong with a data file size of n bytes;
// shown is the value as its setter gave it.
func FileSizeProblem(n int64, shown string) string {
	if n >= MinFileSize {
		return ""
	}
	return fmt.Sprintf("must be a size of at least %dKiB (smaller files hold a few items each and only bring the export nearer Import from S3's limit of %d files), such as 64MiB, not %s",
		MinFileSize>>10, capacity.MaxImportFiles, shown)
}

// Bounds of an uploaded part: S3's limits of a multipart upload's part.
const (
	MinPartSize = 5 << 20
	MaxPartSize = 5 << 30
)

// PartSizeProblem is what is wrong with a part size of n bytes.
func PartSizeProblem(n int64) string {
	if n >= MinPartSize && n <= MaxPartSize {
		return ""
	}
	return fmt.Sprintf("must be from %d to %d (MiB, S3's limits of a part)", MinPartSize>>20, MaxPartSize>>20)
}

// WhereProblem is what is wrong with an export's place: a directory or
// s3://bucket/prefix (s3Only: only the latter), with a bucket name S3
// accepts. A problem that describes the value begins with ": ".
func WhereProblem(v string, s3Only bool) string {
	w, err := ParseWhere(v)
	if err != nil {
		return ": " + err.Error()
	}
	if !w.IsS3() {
		if s3Only {
			return fmt.Sprintf("must be s3://bucket/prefix, not %q", v)
		}
		return ""
	}
	// S3's rule for new buckets: 3 to 63 lower-case letters, digits, '.'
	// and '-', beginning and ending with a letter or digit.
	b := w.Bucket
	ok := len(b) >= 3 && len(b) <= 63 && b[0] != '.' && b[0] != '-' && b[len(b)-1] != '.' && b[len(b)-1] != '-'
	for _, r := range b {
		ok = ok && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-')
	}
	if !ok {
		return fmt.Sprintf(": bucket name %q is not one S3 allows (3 to 63 lower-case letters, digits, '.' and '-')", b)
	}
	return ""
}

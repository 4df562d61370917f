package report

import "fmt"

// Bytes renders a byte count in binary units, one decimal: "512 B",
// "1.5 KiB", "3.0 GiB". The CLI's sync and sync status lines and the
// engine's slot messages share it, so that the same amount reads the same.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

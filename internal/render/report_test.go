package render

import (
	"strings"
	"testing"
)

func TestWantColor(t *testing.T) {
	var b strings.Builder
	if WantColor(&b, "auto") {
		t.Error("colour for a buffer")
	}
	if !WantColor(&b, "always") || WantColor(&b, "never") {
		t.Error("always/never ignored")
	}
	t.Setenv("NO_COLOR", "1")
	if WantColor(&b, "auto") {
		t.Error("NO_COLOR ignored")
	}
}

package load

// TestCreds are the static credentials of the tests.
var TestCreds = testCreds

// Feed is feed, for the external tests.
var Feed = feed

// FakeKey and TestItem are fakeKey and item, for the external tests.
var (
	FakeKey  = fakeKey
	TestItem = item
)

// DirectCalls says how many of w's calls were sent without the SDK's
// middleware, and how many of their answers were replayed through it.
func DirectCalls(w *Writer) (sent, replayed int64) {
	if w.direct == nil {
		return 0, 0
	}
	return w.direct.sent.Load(), w.direct.replayed.Load()
}

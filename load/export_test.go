package load

// CanonicalNumber is canonicalNumber, for the external tests.
var CanonicalNumber = canonicalNumber

// TestCreds are the static credentials of the tests.
var TestCreds = testCreds

// Feed is feed, for the external tests.
var Feed = feed

// FakeKey and TestItem are fakeKey and item, for the external tests.
var (
	FakeKey  = fakeKey
	TestItem = item
)

// Package archtest holds the tests that keep the house in order: which of
// the project's packages may import which (see package engine's
// documentation for the drawing), that DynamoDB's value rules are
// written once, in internal/ddbvalue, and that cmd/migrate stays a thin
// CLI (at most 6% of the non-test Go lines). It has no code of its own.
package archtest

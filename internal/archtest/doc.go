// Package archtest holds the tests that keep the house in order: which of
// the project's packages may import which (see package engine's
// documentation for the drawing), and that DynamoDB's value rules are
// written once, in internal/ddbvalue. It has no code of its own.
package archtest

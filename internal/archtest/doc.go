// Package archtest holds the test that keeps the house in order: which of
// the project's packages may import which (see package engine's
// documentation for the drawing). It has no code of its own.
package archtest

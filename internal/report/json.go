package report

import (
	"encoding/json"
	"io"
	"slices"
)

// JSON writes a plan as an indented JSON document of PlanSchema. Lists are
// [] rather than null when empty.
func JSON(w io.Writer, p *Plan) error {
	c := *p
	c.Schema = PlanSchema
	c.Entities = nonNil(c.Entities)
	c.Creates = nonNil(c.Creates)
	c.Changes = nonNil(c.Changes)
	c.Stale = nonNil(c.Stale)
	c.Problems = nonNil(c.Problems)
	c.Changes = slices.Clone(c.Changes) // do not touch the caller's items
	for i := range c.Changes {
		c.Changes[i].Attributes = nonNil(c.Changes[i].Attributes)
	}
	cp := &c.Capacity
	cp.SizeHistogram = nonNil(cp.SizeHistogram)
	cp.TopPartitionsByItems = nonNil(cp.TopPartitionsByItems)
	cp.TopPartitionsByBytes = nonNil(cp.TopPartitionsByBytes)
	cp.Indexes = nonNil(cp.Indexes)
	cp.Shards = nonNil(cp.Shards)
	cp.Copies = nonNil(cp.Copies)
	if cp.Cheaper == "" {
		cp.Cheaper = "write" // what a tie says: a plan that computed no costs
	}
	return encode(w, &c)
}

// VerifyJSON writes a verification as an indented JSON document of
// VerifySchema.
func VerifyJSON(w io.Writer, v *Verify) error {
	c := *v
	c.Schema = VerifySchema
	c.Entities = nonNil(c.Entities)
	c.Missing = nonNil(c.Missing)
	c.Different = nonNil(c.Different)
	c.Unexpected = nonNil(c.Unexpected)
	c.Problems = nonNil(c.Problems)
	c.Different = slices.Clone(c.Different)
	for i := range c.Different {
		c.Different[i].Attributes = nonNil(c.Different[i].Attributes)
	}
	return encode(w, &c)
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

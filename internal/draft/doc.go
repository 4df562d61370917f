// Package draft writes a first mapping file from a live PostgreSQL catalog,
// so that a new user starts from their own database instead of a blank
// file (`migrate init`).
//
// [Read] reads one schema's tables, columns, primary, unique and foreign
// keys in a read-only transaction, and measures how many children a parent
// has at most for each foreign key. [Make] turns that into a commented
// mapping, pure and deterministic:
//
//   - every table with a primary key (or a NOT NULL unique key) becomes an
//     entity keyed on it;
//   - a foreign key that is NOT NULL and references its parent's key puts
//     the child into the parent's item collection: the child's partition key
//     is the parent's (rule 3), one level deep so that every key is built
//     from the row alone; identifying foreign keys (part of the child's key)
//     are preferred;
//   - the other foreign keys give the child an index entry under the
//     parent's key, sparse when the column may be NULL (rule 4);
//   - a pure join table (its primary key made of two foreign keys) becomes an
//     adjacency list, with the inverted index answering the other side
//     (rule 6);
//   - a child whose key does not hold its parent's key (so that its
//     partition cannot be named from its own key) gets an entry under its
//     own key in an index, so that every entity is read by its key;
//   - each other unique key becomes a lookup index;
//   - children whose observed maximum per parent is small are offered to the
//     parent as embeds (rule 1), commented out, with max from the data.
//
// The indexes are overloaded: each index entry of an entity goes to the
// first GSI the entity does not use yet and where no other entity's entry
// could answer its pattern (nor it theirs), so the draft needs about as
// many GSIs as the entity that needs most. Comments name the access
// pattern each choice serves, and the accessPatterns section writes each
// one out with its SQL, for "migrate prove" (patterns.go).
package draft

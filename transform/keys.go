package transform

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/extract"
)

// EntityNames names the entities built from this source, in mapping order.
func (s *Source) EntityNames() []string {
	out := make([]string, len(s.Entities))
	for i, ep := range s.Entities {
		out[i] = ep.e.Name
	}
	return out
}

// JoinEntity names the entity Query.Joins[i] copies parent columns for.
func (s *Source) JoinEntity(i int) string { return s.joinOf[i] }

// EmbedEntity names the entity Query.Embeds[i] embeds child rows into.
func (s *Source) EmbedEntity(i int) string { return s.embedOf[i] }

// KeyColumns are the base-table columns the primary keys of this source's
// items are built from, in query order: the values an old version of a
// row must carry to name the items it had.
func (s *Source) KeyColumns() []string {
	used := make([]bool, len(s.Query.Columns))
	for _, ep := range s.Entities {
		for _, kp := range []keyPlan{ep.pk, ep.sk} {
			for _, pos := range kp.cols {
				if pos >= 0 && pos < len(used) {
					used[pos] = true
				}
			}
		}
	}
	var out []string
	for i, u := range used {
		if u {
			out = append(out, s.Query.Columns[i].Name)
		}
	}
	return out
}

// ItemKeys builds only the primary keys of the items a row produces: each
// Item's Attrs hold the table's key attributes and nothing else. Only the
// KeyColumns of the row need values (the rest may be nil), so that the
// keys of a deleted row's items can be found from its old version.
func (s *Source) ItemKeys(row extract.Row) ([]Item, []*RowError) {
	var items []Item
	var errs []*RowError
	key := &rowKey{src: s, row: row}
	for _, ep := range s.Entities {
		m := ep.m
		attrs := make(map[string]types.AttributeValue, 2)
		var failed *RowError
		for _, k := range []struct {
			kp   keyPlan
			attr string
		}{{ep.pk, m.PartitionKey}, {ep.sk, m.SortKey}} {
			if k.kp.t == nil {
				continue
			}
			av, _, err := ep.renderKey(s, row, key, k.kp, k.attr, nil)
			if err != nil {
				failed = err
				break
			}
			attrs[k.attr] = av
		}
		if failed != nil {
			errs = append(errs, failed)
			continue
		}
		items = append(items, Item{Entity: ep.e.Name, Table: ep.tableName, SourceKey: key.String(), Attrs: attrs})
	}
	return items, errs
}

// CopiedKeyColumns describes the copied (joined) columns the primary keys
// of this source's items are built from, as "Entity key.pk reads
// schema.table.column": a change of such a parent row moves items to
// other keys.
func (s *Source) CopiedKeyColumns() []string {
	var out []string
	for _, ep := range s.Entities {
		for _, k := range []struct {
			kp   keyPlan
			name string
		}{{ep.pk, "key.pk"}, {ep.sk, "key.sk"}} {
			for _, pos := range k.kp.cols {
				if pos < len(s.Query.Columns) {
					continue
				}
				rel := pos - len(s.Query.Columns)
				for _, j := range s.Query.Joins {
					if rel < len(j.Columns) {
						out = append(out, fmt.Sprintf("%s %s reads %s.%s.%s", ep.e.Name, k.name, j.Schema, j.Table, j.Columns[rel].Name))
						break
					}
					rel -= len(j.Columns)
				}
			}
		}
	}
	return out
}

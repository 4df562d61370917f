package mapping

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// parseJoin reads join: { <column of the joined table>: <column of the row it attaches to> }.
func (p *parser) parseJoin(n *yaml.Node, what string) []JoinPair {
	var out []JoinPair
	p.fields(n, what+" join", nil, func(col string, k, v *yaml.Node) {
		if other, ok := p.name(v, "join column"); ok {
			out = append(out, JoinPair{Column: col, Other: other, Pos: pos(k)})
		}
	})
	if n.Kind == yaml.MappingNode && len(n.Content) == 0 {
		p.r.errorf(pos(n), "%s join must pair at least one column", what)
	}
	return out
}

func (p *parser) positiveInt(n *yaml.Node, what string, limit int64) (int64, bool) {
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if n.Kind != yaml.ScalarNode || err != nil || v < 1 || v > limit {
		p.r.errorf(pos(n), "%s must be a whole number from 1 to %d, not %s", what, limit, kindName(n))
		return 0, false
	}
	return v, true
}

func (p *parser) parseEmbed(attr string, k, n *yaml.Node, schema string) *Embed {
	em := &Embed{Attribute: attr, Schema: schema, Pos: pos(k)}
	what := "embed " + attr
	have := map[string]bool{}
	p.fields(n, what, []string{"from", "schema", "join", "as", "by", "order", "max", "attributes", "exclude"}, func(key string, _, v *yaml.Node) {
		have[key] = true
		switch key {
		case "from":
			em.From, _ = p.name(v, "from")
			em.FromPos = pos(v)
		case "schema":
			em.Schema, _ = p.name(v, "schema")
		case "join":
			em.Join = p.parseJoin(v, what)
		case "as":
			if s, ok := p.name(v, "as"); ok {
				if s != "map" && s != "list" {
					p.r.errorf(pos(v), "%s: as must be \"map\" or \"list\", not %q", what, s)
				}
				em.As = s
			}
		case "by":
			if s, ok := p.name(v, "by"); ok {
				em.By = Ref{s, pos(v)}
			}
		case "order":
			if v.Kind == yaml.ScalarNode {
				if s, ok := p.name(v, "order"); ok {
					em.Order = []Ref{{s, pos(v)}}
				}
			} else {
				em.Order = p.refs(v, "order", "column names")
			}
		case "max":
			if m, ok := p.positiveInt(v, what+" max", 100000); ok {
				em.Max = int(m)
			}
			em.MaxPos = pos(v)
		case "attributes":
			em.AllColumns, em.Attributes = p.parseAttributes(v, what)
		case "exclude":
			em.Exclude = p.refs(v, "exclude", "column names")
		}
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	p.required(&yaml.Node{Line: em.Pos.Line, Column: em.Pos.Col}, what, have, "from", "join", "as", "max")
	if em.As == "map" && em.By.Name == "" {
		p.r.errorf(em.Pos, "%s: as: map needs by: <column> for the map keys", what)
	}
	if em.As == "list" && em.By.Name != "" {
		p.r.errorf(em.By.Pos, "%s: by applies to as: map; a list is ordered with order", what)
	}
	if !have["attributes"] {
		em.AllColumns = true
	}
	if len(em.Exclude) > 0 && !em.AllColumns {
		p.r.errorf(em.Exclude[0].Pos, "exclude needs attributes: \"*\" (it removes columns from the full selection)")
	}
	return em
}

func (p *parser) parseCopies(n *yaml.Node, schema string) []*Copy {
	if n.Kind != yaml.SequenceNode {
		p.r.errorf(pos(n), "copy must be a list of parents to copy from, not %s", kindName(n))
		return nil
	}
	var out []*Copy
	for _, c := range n.Content {
		cp := &Copy{Schema: schema, Pos: pos(c)}
		have := map[string]bool{}
		p.fields(c, "copy", []string{"from", "schema", "join", "attributes", "copy", "into"}, func(key string, _, v *yaml.Node) {
			have[key] = true
			switch key {
			case "from":
				cp.From, _ = p.name(v, "from")
				cp.FromPos = pos(v)
			case "schema":
				cp.Schema, _ = p.name(v, "schema")
			case "join":
				cp.Join = p.parseJoin(v, "copy")
			case "attributes":
				all, attrs := p.parseAttributes(v, "copy from "+cp.From)
				if all {
					p.r.errorf(pos(v), "copy needs the parent columns named: attributes: \"*\" would copy keys and everything else")
				}
				cp.Attributes = attrs
			case "copy":
				cp.Copies = p.parseCopies(v, cp.Schema)
			case "into":
				cp.Into, _ = p.name(v, "into")
				cp.IntoPos = pos(v)
			}
		})
		if c.Kind == yaml.MappingNode {
			p.required(c, "copy", have, "from", "join")
			if !have["attributes"] && !have["copy"] && have["into"] {
				p.r.errorf(pos(c), "copy from %s into %s copies nothing: add attributes (or a nested copy)", cp.From, cp.Into)
			}
		}
		out = append(out, cp)
	}
	return out
}

func (p *parser) parseShard(k, n *yaml.Node) *Shard {
	sh := &Shard{Pos: pos(k)}
	have := map[string]bool{}
	p.fields(n, "shard", []string{"count", "by", "readRate"}, func(key string, _, v *yaml.Node) {
		have[key] = true
		switch key {
		case "count":
			if v.Kind == yaml.ScalarNode && v.Value == "auto" {
				sh.Count = 0
				return
			}
			if c, ok := p.positiveInt(v, "shard count (or auto)", 1000); ok {
				sh.Count = int(c)
			}
		case "by":
			if s, ok := p.name(v, "shard by"); ok && s != "random" {
				sh.By = s
				sh.ByPos = pos(v)
			}
		case "readRate":
			if r, ok := p.positiveInt(v, "readRate (items per second)", 1<<40); ok {
				sh.ReadRate = r
			}
		}
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	p.required(n, "shard", have, "count", "by")
	if have["count"] && sh.Count == 0 && !have["readRate"] {
		p.r.errorf(pos(n), "shard count: auto needs readRate, the items per second one index key must serve at peak")
	}
	return sh
}

func (p *parser) checkShardPlaceholder(ei *EntityIndex) {
	uses := func(t *Template) bool {
		if t == nil {
			return false
		}
		for _, c := range t.Columns() {
			if c == ShardPlaceholder {
				return true
			}
		}
		return false
	}
	if ei.Shard != nil && !uses(ei.PK) {
		p.r.errorf(ei.Shard.Pos, "index %s declares shard but its pk does not use {%s}", ei.Index, ShardPlaceholder)
	}
	if ei.Shard != nil && uses(ei.SK) {
		p.r.errorf(ei.SK.Pos, "index %s: {%s} belongs in the pk, where it spreads the partition", ei.Index, ShardPlaceholder)
	}
}

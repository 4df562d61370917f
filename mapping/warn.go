package mapping

// WarningPrefix starts the message of every diagnostic Warnings returns, so
// that the printed form reads "file:line:col: warning: ...".
const WarningPrefix = "warning: "

// Warnings returns what the catalog allows but a run may reject: today, key
// templates that read a column without a NOT NULL constraint (a NULL cannot
// be part of a table key, so such a row is a row error). Warnings are advice:
// they never make a mapping invalid, and callers print them without failing.
// Index templates are not warned about: a NULL there leaves the item out of
// the index on purpose (a sparse index). Call it after Check succeeded; it
// skips what Check reports.
func Warnings(m *Mapping, cat *Catalog) Diagnostics {
	r := &reporter{file: m.File}
	for _, e := range m.Entities {
		t := cat.Lookup(e.Schema, e.From)
		if t == nil {
			continue
		}
		for _, k := range []struct {
			what string
			tpl  *Template
		}{{"key.pk", e.PK}, {"key.sk", e.SK}} {
			if k.tpl == nil {
				continue
			}
			for _, part := range k.tpl.Parts {
				if part.Column == "" {
					continue
				}
				if c := t.Column(part.Column); c != nil && !c.NotNull {
					r.errorf(offsetInTemplate(k.tpl, part), "%s%s %s: column %q of %s.%s is nullable: NULL rows will be rejected (the item's key cannot be built); add NOT NULL to the column, or key on another column",
						WarningPrefix, e.Name, k.what, part.Column, t.Schema, t.Name)
				}
			}
		}
	}
	if len(r.diags) == 0 {
		return nil
	}
	return r.diags.sorted()
}

package mapping

// TemplatesDisjoint exposes templatesDisjoint to the fuzz test.
var TemplatesDisjoint = templatesDisjoint

// ReadPredicate exposes readPredicate to its table test.
var ReadPredicate = readPredicate

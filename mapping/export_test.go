package mapping

// TemplatesDisjoint exposes templatesDisjoint to the fuzz test.
var TemplatesDisjoint = templatesDisjoint

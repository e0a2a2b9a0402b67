package extractive

// QuotesOnly reports that the extractive answerer only quotes the passages: asked to compare documents, the
// answer service asks it once per document and lays out the parts (answer.QuoteOnly).
func (g *Generator) QuotesOnly() bool { return true }

package api

// ToolMatch is one tool found by GET /agents/{class}/{name}/tools?q=: the
// tool, its key (the name a model calls it by, as in the agent's
// AITools), and its score (higher is better; comparable only within one
// answer). Matches come best first.
type ToolMatch struct {
	Tool
	Key   string  `json:"key"`
	Score float64 `json:"score"`
}

// Tool search's limits on the number of matches.
const (
	DefaultToolSearchLimit = 10
	MaxToolSearchLimit     = 100
)

package aitools

// Through returns the ToolSet of the tools of s that keep accepts (all,
// when keep is nil), with the same keys and their collisions, whose calls
// go through call instead of the Caller they were built with: for a layer
// that checks each call before it reaches the server (an agent's tool
// policy). s is not changed.
func (s *ToolSet) Through(call Caller, keep func(*Tool) bool) *ToolSet {
	if keep == nil {
		keep = func(*Tool) bool { return true }
	}
	out := s.Select(keep)
	for i := range out.tools {
		out.tools[i].call = call
	}
	return out
}

package aitools

// synonymWeight is how much a query word's synonym counts against the
// word itself.
const synonymWeight = 0.3

// synonymGroups are words that people and tool authors use for the same
// thing. Within a group every word is a synonym of every other.
var synonymGroups = [][]string{
	{"delete", "remove", "erase", "destroy", "drop", "rm", "unlink", "forget"},
	{"create", "add", "new", "make", "insert", "open", "remember"},
	{"get", "read", "fetch", "retrieve", "show", "view", "load", "cat", "download"},
	{"list", "show", "enumerate", "browse", "ls", "all"},
	{"search", "find", "query", "lookup", "look", "grep", "locate", "seek"},
	{"update", "edit", "modify", "set", "patch", "replace"},
	{"write", "save", "store", "put", "upload", "persist", "record"},
	{"send", "post", "message", "notify", "publish", "reply"},
	{"run", "execute", "exec", "invoke", "call", "perform", "start", "launch"},
	{"move", "rename", "mv", "relocate"},
	{"directory", "folder", "dir"},
	{"repository", "repo", "project"},
	{"pull", "pr", "merge"},
	{"issue", "ticket", "bug", "problem", "error"},
	{"page", "website", "site", "webpage", "url", "web", "link"},
	{"screenshot", "capture", "snapshot", "image", "picture"},
	{"channel", "room", "conversation"},
	{"user", "person", "people", "member", "account", "profile"},
	{"entity", "node", "object", "thing"},
	{"relation", "relationship", "link", "edge", "connection"},
	{"observation", "fact", "note"},
	{"table", "schema", "database", "db", "sql"},
	{"file", "document", "doc"},
	{"size", "metadata", "info", "stat", "detail"},
	{"sum", "add", "plus", "total"},

	{"diff", "difference", "changes", "compare"},
	{"log", "history"},
	{"time", "clock", "date", "now"},
	{"echo", "repeat"},
	{"click", "press", "tap"},
	{"type", "fill", "enter", "input"},
	{"go", "navigate", "visit", "browse"},
	{"weather", "forecast"},
	{"place", "location", "address", "venue"},
	{"direction", "route", "navigation"},
}

// synonyms maps a term (a stem, as [Terms] gives it) to its synonyms.
var synonyms = synonymTable(synonymGroups)

func synonymTable(groups [][]string) map[string][]string {
	out := map[string][]string{}
	for _, g := range groups {
		stems := make([]string, 0, len(g))
		for _, w := range g {
			stems = append(stems, Terms(w)...)
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !contains(out[a], b) {
					out[a] = append(out[a], b)
				}
			}
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

package aitools

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// MaxKeyLen is the longest key OpenAI and Anthropic accept as a tool name.
const MaxKeyLen = 64

// SeedKey returns the key the seed gives a tool: "tool_", the server id
// with every "-" removed, "_", and the tool name unchanged. It may be
// invalid as a provider tool name (see [ValidKey]); [Cache.Build] uses it
// only when it is valid and no other tool has the same seed key.
func SeedKey(serverID, name string) string {
	return "tool_" + strings.ReplaceAll(serverID, "-", "") + "_" + name
}

// ValidKey reports whether key matches ^[a-zA-Z0-9_-]{1,64}$, the tool
// name pattern OpenAI and Anthropic accept.
func ValidKey(key string) bool {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !keyByte(key[i]) {
			return false
		}
	}
	return true
}

func keyByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-'
}

// SafeKey returns the hashed key of a tool: "tool_<server>_<tool>_<hash>",
// where <server> and <tool> are the server id and the tool name with every
// character outside [a-zA-Z0-9_-] replaced by "_", shortened (the tool
// name keeps the larger share) so that the key fits in 64 characters, and
// <hash> is the first 8 hex digits of SHA-256(serverID + "\x00" + name).
// It is always valid and depends on nothing but the tool's identity.
func SafeKey(serverID, name string) string {
	return safeKey(serverID, name, 8)
}

// identityHash is SHA-256 over a tool's identity, plus extra parts when a
// collision must be broken.
func identityHash(serverID, name string, extra ...string) string {
	h := sha256.New()
	h.Write([]byte(serverID))
	h.Write([]byte{0})
	h.Write([]byte(name))
	for _, e := range extra {
		h.Write([]byte{0})
		h.Write([]byte(e))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// safeKey is SafeKey with hexLen hex digits of hash.
func safeKey(serverID, name string, hexLen int) string {
	return withFragments(serverID, name, identityHash(serverID, name)[:hexLen])
}

// withFragments returns "tool_<server>_<tool>_<suffix>" within MaxKeyLen.
func withFragments(serverID, name, suffix string) string {
	s, n := sanitize(serverID), sanitize(name)
	budget := MaxKeyLen - len("tool_") - 2 - len(suffix)
	if len(s)+len(n) > budget {
		// The tool name is the more telling fragment: the server keeps what
		// the tool name leaves, but at least a third of the budget.
		sl := min(len(s), max(budget-len(n), budget/3))
		s, n = s[:sl], n[:budget-sl]
	}
	var b strings.Builder
	b.Grow(len("tool_") + len(s) + len(n) + 2 + len(suffix))
	b.WriteString("tool_")
	b.WriteString(s)
	b.WriteByte('_')
	b.WriteString(n)
	b.WriteByte('_')
	b.WriteString(suffix)
	return b.String()
}

// sanitize replaces every character outside [a-zA-Z0-9_-] with "_".
func sanitize(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !keyByte(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && keyByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// A Collision is a key that several tools would have had. None of them
// gets it: each gets a longer, hashed key instead (see [Cache.Build]).
type Collision struct {
	// Key is the contested key.
	Key string
	// Tools are the tools that wanted Key, sorted by server id and name,
	// each with the key it got.
	Tools []ToolRef
}

// ToolRef names a tool of a ToolSet.
type ToolRef struct {
	ServerID string
	Name     string
	Key      string
}

// keyItem is the identity of one tool, with its seed key precomputed.
type keyItem struct {
	serverID, name string
	seed           string // SeedKey
	seedOK         bool   // ValidKey(seed)
	safe           string // SafeKey
}

func newKeyItem(serverID, name string) keyItem {
	seed := SeedKey(serverID, name)
	return keyItem{serverID: serverID, name: name, seed: seed, seedOK: ValidKey(seed), safe: SafeKey(serverID, name)}
}

// Key levels: the seed key, then SafeKey with ever longer hashes, then
// hashes over the identity and an ordinal (only identical identities get
// that far).
const (
	levelSeed = iota
	levelSafe8
	levelSafe16
	levelSafe32
	levelOrdinal
)

// assignKeys gives every item a key that is valid and unique among items.
//
// Each item starts at its seed key when that is valid, else at its
// SafeKey. While several items want the same key, none of them gets it:
// all move to their next level. The result depends on the set of
// identities only, not on their order (except among identical
// identities, which are indistinguishable).
func assignKeys(items []keyItem) (keys []string, collisions []Collision) {
	n := len(items)
	keys = make([]string, n)
	level := make([]int, n)
	ordinal := make([]int, n)
	for i, it := range items {
		if it.seedOK {
			keys[i] = it.seed
		} else {
			level[i] = levelSafe8
			keys[i] = it.safe
		}
	}
	type group struct {
		key     string
		members []int
	}
	var contested []group
	for {
		byKey := make(map[string]int, n) // key -> first index, or -1 once contested
		var dup map[string][]int
		for i, k := range keys {
			j, seen := byKey[k]
			if !seen {
				byKey[k] = i
				continue
			}
			if dup == nil {
				dup = map[string][]int{}
			}
			if j >= 0 {
				dup[k] = append(dup[k], j)
				byKey[k] = -1
			}
			dup[k] = append(dup[k], i)
		}
		if len(dup) == 0 {
			break
		}
		for k, members := range dup {
			contested = append(contested, group{k, members})
			// Order members by identity, so that ordinals (for identical
			// identities) are as deterministic as they can be.
			slices.SortStableFunc(members, func(a, b int) int {
				return cmp.Or(cmp.Compare(items[a].serverID, items[b].serverID), cmp.Compare(items[a].name, items[b].name))
			})
			for o, i := range members {
				level[i]++
				if level[i] >= levelOrdinal {
					ordinal[i] = o
				}
				keys[i] = keyAt(items[i], level[i], ordinal[i])
			}
		}
	}
	for _, g := range contested {
		c := Collision{Key: g.key}
		for _, i := range g.members {
			c.Tools = append(c.Tools, ToolRef{ServerID: items[i].serverID, Name: items[i].name, Key: keys[i]})
		}
		collisions = append(collisions, c)
	}
	slices.SortFunc(collisions, func(a, b Collision) int { return cmp.Compare(a.Key, b.Key) })
	return keys, collisions
}

// keyAt returns the key of it at level.
func keyAt(it keyItem, level, ordinal int) string {
	switch level {
	case levelSeed:
		return it.seed
	case levelSafe8:
		return it.safe
	case levelSafe16:
		return safeKey(it.serverID, it.name, 16)
	case levelSafe32:
		return safeKey(it.serverID, it.name, 32)
	}
	h := identityHash(it.serverID, it.name, strconv.Itoa(level), strconv.Itoa(ordinal))
	return withFragments(it.serverID, it.name, h[:16])
}

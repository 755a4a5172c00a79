package aitools

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Ranker scores tools against a query. All are BM25 (Okapi BM25,
// k1 = 1.2, b = 0.75) over a tool's text; they differ in how much each
// part of a tool counts, and in whether a query's words also match their
// synonyms.
type Ranker int

const (
	// RankBoosted is RankBM25F, and a query's words also match their
	// common synonyms ("remove" finds "delete", "folder" finds
	// "directory") at 0.3 of a word's weight. It is the default: in the
	// retrieval evaluation (internal/searcheval; docs/PERFORMANCE.md) it
	// puts the right tool in the first five more often than the others
	// (recall@5 0.985 against 0.955 and 0.963) with the best MRR.
	RankBoosted Ranker = iota
	// RankBM25 is plain BM25 over all of a tool's text, every part
	// counting the same, without synonyms.
	RankBM25
	// RankBM25F is BM25F without synonyms: a term in a tool's name, its
	// title or its server's id counts twice, in a parameter's name once
	// and a half, in a parameter's description half, in the tool's
	// description once.
	RankBM25F
)

func (r Ranker) String() string {
	switch r {
	case RankBoosted:
		return "bm25f+synonyms"
	case RankBM25:
		return "bm25"
	case RankBM25F:
		return "bm25f"
	}
	return fmt.Sprintf("ranker(%d)", int(r))
}

// Fields of a tool's text, as the index keeps them apart.
const (
	fieldName      = iota // the tool's name
	fieldTitle            // its title
	fieldDesc             // its description
	fieldParam            // its parameters' names
	fieldParamDesc        // its parameters' descriptions
	fieldServer           // the server's id
	numFields
)

// weights per ranker and field.
var rankWeights = [...][numFields]float32{
	RankBoosted: {2, 2, 1, 1.5, 0.5, 2},
	RankBM25:    {1, 1, 1, 1, 1, 1},
	RankBM25F:   {2, 2, 1, 1.5, 0.5, 2},
}

// BM25's parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// IndexOptions configures an Index. The zero value, or nil, gives the
// defaults each field documents.
type IndexOptions struct {
	// Ranker is the ranking used by Search. Zero means RankBoosted.
	Ranker Ranker
}

// An Index finds a ToolSet's tools by what they do: it indexes each
// tool's name, title and description, its parameters' names and
// descriptions, and its server's id (see [Terms] for how text becomes
// terms), and ranks matches with BM25 ([Ranker]).
//
// [Index.Update] keeps it in step with a catalog incrementally: a tool
// whose definition did not change (the same *mcp.Tool) is not read
// again, a new or replaced one is, and one that left is dropped; an
// unchanged ToolSet costs one comparison. A query over 10,000 tools
// takes some tens of microseconds (BenchmarkSearch).
//
// An Index is safe for concurrent use: searches run in parallel, an
// update excludes them while it runs.
type Index struct {
	ranker Ranker

	// mu guards the fields below.
	mu       sync.RWMutex
	set      *ToolSet           // the ToolSet indexed last
	docs     []doc              // by doc id; dead ones are skipped
	byDef    map[defKey]int32   // live docs by definition
	terms    map[string]int32   // term -> term id
	postings [][]posting        // by term id, doc ids ascending
	df       []int32            // live docs per term id
	live     int                // live docs
	lenSum   float64            // weighted lengths summed over live docs
	dead     int                // dead docs still in postings
	stats    IndexStats         // cumulative
	names    map[string][]int32 // lowercase tool names and keys -> live docs
	scratch  sync.Pool          // *[]float32, scores by doc id
}

// defKey identifies a definition in a catalog: the same *mcp.Tool can in
// principle be listed by two servers.
type defKey struct {
	def      *mcp.Tool
	serverID string
}

// doc is one tool in the index.
type doc struct {
	tool   *Tool // in the ToolSet indexed last
	key    defKey
	terms  []docTerm // distinct terms, with their weighted counts
	length float32   // the weighted count of its terms
	alive  bool
}

type docTerm struct {
	id int32
	tf float32
}

// posting is one doc holding a term, with the term's count in it,
// weighted by field for the index's ranker.
type posting struct {
	doc int32
	tf  float32
}

// IndexStats counts an Index's work, cumulatively, and its size now.
type IndexStats struct {
	// Updates counts calls of Update; Rebuilds those that found the
	// catalog changed.
	Updates, Rebuilds int64
	// Indexed counts tools whose text was read and split into terms: a
	// tool is read when it is new or its definition was replaced.
	Indexed int64
	// Removed counts tools dropped because they left the catalog or
	// their definition was replaced.
	Removed int64
	// Compactions counts rewrites of the postings that clear out the
	// dropped tools (from the terms kept, without reading any tool).
	Compactions int64
	// Tools and Terms are the size of the index now.
	Tools, Terms int
}

// NewIndex returns an empty Index. It does no I/O.
func NewIndex(opts *IndexOptions) *Index {
	idx := &Index{byDef: map[defKey]int32{}, terms: map[string]int32{}, names: map[string][]int32{}}
	if opts != nil {
		idx.ranker = opts.Ranker
	}
	if int(idx.ranker) >= len(rankWeights) || idx.ranker < 0 {
		idx.ranker = RankBoosted
	}
	return idx
}

// Ranker returns the index's ranking.
func (idx *Index) Ranker() Ranker { return idx.ranker }

// Update makes the index hold the tools of set, and returns the index.
// Only tools whose definitions are new to it are read; see [Index].
func (idx *Index) Update(set *ToolSet) *Index {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	idx.stats.Updates++
	if set == idx.set && set != nil {
		return idx
	}
	idx.stats.Rebuilds++
	seen := make(map[int32]bool, set.Len())
	for t := range set.All() {
		if t.Def == nil {
			continue
		}
		k := defKey{t.Def, t.ServerID}
		id, ok := idx.byDef[k]
		if ok && seen[id] {
			continue // the same definition twice: indexed once
		}
		if ok {
			seen[id] = true
			if d := &idx.docs[id]; d.tool.Key != t.Key {
				idx.unname(id)
				d.tool = t
				idx.name(id)
			} else {
				d.tool = t
			}
			continue
		}
		seen[idx.addLocked(t)] = true
	}
	for k, id := range idx.byDef {
		if !seen[id] {
			idx.removeLocked(id)
			delete(idx.byDef, k)
		}
	}
	if idx.dead > 64 && idx.dead > idx.live {
		idx.compactLocked()
	}
	idx.set = set
	return idx
}

// addLocked indexes t as a new doc and returns its id.
func (idx *Index) addLocked(t *Tool) int32 {
	idx.stats.Indexed++
	id := int32(len(idx.docs))
	d := doc{tool: t, key: defKey{t.Def, t.ServerID}, alive: true}
	w := rankWeights[idx.ranker]
	counts := map[string]float32{}
	var order []string
	add := func(field int, text string) {
		for _, term := range appendTerms(nil, text) {
			if _, ok := counts[term]; !ok {
				order = append(order, term)
			}
			counts[term] += w[field]
			d.length += w[field]
		}
	}
	add(fieldName, t.Name)
	add(fieldTitle, t.Title)
	add(fieldDesc, t.Description)
	params(t.InputSchema, func(name, desc string) {
		add(fieldParam, name)
		add(fieldParamDesc, desc)
	})
	add(fieldServer, t.ServerID)
	d.terms = make([]docTerm, 0, len(order))
	for _, term := range order {
		tid, ok := idx.terms[term]
		if !ok {
			tid = int32(len(idx.postings))
			idx.terms[term] = tid
			idx.postings = append(idx.postings, nil)
			idx.df = append(idx.df, 0)
		}
		tf := counts[term]
		d.terms = append(d.terms, docTerm{id: tid, tf: tf})
		idx.postings[tid] = append(idx.postings[tid], posting{doc: id, tf: tf})
		idx.df[tid]++
	}
	idx.lenSum += float64(d.length)
	idx.docs = append(idx.docs, d)
	idx.byDef[d.key] = id
	idx.live++
	idx.name(id)
	return id
}

// removeLocked marks doc id dead; its postings stay until a compaction.
func (idx *Index) removeLocked(id int32) {
	d := &idx.docs[id]
	if !d.alive {
		return
	}
	idx.stats.Removed++
	idx.unname(id)
	d.alive = false
	for _, dt := range d.terms {
		idx.df[dt.id]--
	}
	idx.lenSum -= float64(d.length)
	d.tool = nil
	idx.live--
	idx.dead++
}

// compactLocked drops dead docs: doc ids are renumbered and the postings
// rewritten from the docs' terms. No tool is read again.
func (idx *Index) compactLocked() {
	idx.stats.Compactions++
	docs := make([]doc, 0, idx.live)
	for _, d := range idx.docs {
		if d.alive {
			docs = append(docs, d)
		}
	}
	postings := make([][]posting, len(idx.postings))
	for i := range docs {
		for _, dt := range docs[i].terms {
			postings[dt.id] = append(postings[dt.id], posting{doc: int32(i), tf: dt.tf})
		}
	}
	// Terms no live doc holds are dropped too.
	terms := make(map[string]int32, len(idx.terms))
	remap := make([]int32, len(idx.postings))
	var kept [][]posting
	var df []int32
	for term, tid := range idx.terms {
		if len(postings[tid]) == 0 {
			remap[tid] = -1
			continue
		}
		remap[tid] = int32(len(kept))
		terms[term] = int32(len(kept))
		kept = append(kept, postings[tid])
		df = append(df, int32(len(postings[tid])))
	}
	for i := range docs {
		for j := range docs[i].terms {
			docs[i].terms[j].id = remap[docs[i].terms[j].id]
		}
	}
	idx.docs, idx.postings, idx.terms, idx.df, idx.dead = docs, kept, terms, df, 0
	idx.byDef = make(map[defKey]int32, len(docs))
	idx.names = map[string][]int32{}
	for i := range docs {
		idx.byDef[docs[i].key] = int32(i)
		idx.name(int32(i))
	}
}

// name and unname keep the exact-name table.
func (idx *Index) name(id int32) {
	t := idx.docs[id].tool
	for _, n := range [...]string{strings.ToLower(t.Name), strings.ToLower(t.Key)} {
		if !slices.Contains(idx.names[n], id) {
			idx.names[n] = append(idx.names[n], id)
		}
	}
}

func (idx *Index) unname(id int32) {
	t := idx.docs[id].tool
	for _, n := range [...]string{strings.ToLower(t.Name), strings.ToLower(t.Key)} {
		ids := slices.DeleteFunc(idx.names[n], func(x int32) bool { return x == id })
		if len(ids) == 0 {
			delete(idx.names, n)
		} else {
			idx.names[n] = ids
		}
	}
}

// params calls fn with the name and description of each property of an
// input schema, nested objects' and array items' properties included (to
// a small depth).
func params(schema map[string]any, fn func(name, desc string)) {
	var walk func(m map[string]any, depth int)
	walk = func(m map[string]any, depth int) {
		if depth > 3 {
			return
		}
		props, _ := m["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p, _ := props[name].(map[string]any)
			desc, _ := p["description"].(string)
			if title, _ := p["title"].(string); title != "" {
				desc = title + " " + desc
			}
			fn(name, desc)
			if p != nil {
				walk(p, depth+1)
				if items, ok := p["items"].(map[string]any); ok {
					walk(items, depth+1)
				}
			}
		}
	}
	walk(schema, 0)
}

// A Match is a tool found by a search, with its score: higher is better,
// comparable only within one search.
type Match struct {
	Tool  *Tool
	Score float64
}

// Stats returns counts of the index's work and its size.
func (idx *Index) Stats() IndexStats {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	s := idx.stats
	s.Tools = idx.live
	s.Terms = len(idx.terms)
	return s
}

// Search returns up to limit tools that match query, best first. Zero or
// less means 10. Ties are broken by key, so the order is deterministic.
// A query with no term the index knows matches nothing.
func (idx *Index) Search(query string, limit int) []Match {
	return idx.SearchFunc(query, limit, nil)
}

// SearchFunc is Search among the tools keep accepts (nil accepts all).
func (idx *Index) SearchFunc(query string, limit int, keep func(*Tool) bool) []Match {
	if limit <= 0 {
		limit = 10
	}
	qterms := idx.queryTerms(query)
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	if idx.live == 0 || len(qterms) == 0 {
		return nil
	}
	avg := float32(idx.lenSum / float64(idx.live))
	if avg <= 0 {
		avg = 1
	}
	sp, _ := idx.scratch.Get().(*[]float32)
	if sp == nil || len(*sp) < len(idx.docs) {
		s := make([]float32, len(idx.docs))
		sp = &s
	}
	scores := (*sp)[:len(idx.docs)]
	defer func() {
		clear(scores)
		idx.scratch.Put(sp)
	}()
	var touched []int32
	n := float64(idx.live)
	for _, q := range qterms {
		tid, ok := idx.terms[q.term]
		if !ok || idx.df[tid] == 0 {
			continue
		}
		df := float64(idx.df[tid])
		idf := float32(q.weight * math.Log(1+(n-df+0.5)/(df+0.5)))
		for _, p := range idx.postings[tid] {
			d := &idx.docs[p.doc]
			if !d.alive {
				continue
			}
			tf := p.tf
			s := idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.length/avg))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += s
		}
	}
	// A query that is a tool's exact name or key ranks that tool first.
	if ids := idx.names[strings.ToLower(strings.TrimSpace(query))]; len(ids) > 0 {
		var top float32
		for _, id := range touched {
			top = max(top, scores[id])
		}
		for _, id := range ids {
			if scores[id] == 0 {
				touched = append(touched, id)
			}
			scores[id] += top + 1
		}
	}
	return idx.topLocked(touched, scores, limit, keep)
}

// topLocked returns the limit best of touched, best first.
func (idx *Index) topLocked(touched []int32, scores []float32, limit int, keep func(*Tool) bool) []Match {
	better := func(a, b int32) bool { // a ranks above b
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return idx.docs[a].tool.Key < idx.docs[b].tool.Key
	}
	// A bounded min-heap of the best so far: heap[0] is the worst kept.
	heap := make([]int32, 0, limit)
	down := func(i int) {
		for {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(heap) && better(heap[m], heap[l]) {
				m = l
			}
			if r < len(heap) && better(heap[m], heap[r]) {
				m = r
			}
			if m == i {
				return
			}
			heap[i], heap[m] = heap[m], heap[i]
			i = m
		}
	}
	for _, id := range touched {
		if keep != nil && !keep(idx.docs[id].tool) {
			continue
		}
		if len(heap) < limit {
			heap = append(heap, id)
			for i := len(heap) - 1; i > 0; {
				p := (i - 1) / 2
				if !better(heap[p], heap[i]) {
					break
				}
				heap[i], heap[p] = heap[p], heap[i]
				i = p
			}
			continue
		}
		if better(id, heap[0]) {
			heap[0] = id
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b int32) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return cmp.Compare(a, b)
	})
	out := make([]Match, len(heap))
	for i, id := range heap {
		out[i] = Match{Tool: idx.docs[id].tool, Score: float64(scores[id])}
	}
	return out
}

// qterm is a query term with its weight: 1, or less for a synonym.
type qterm struct {
	term   string
	weight float64
}

// queryTerms returns the distinct terms of query, with the synonyms of
// each when the ranker uses them.
func (idx *Index) queryTerms(query string) []qterm {
	var out []qterm
	seen := map[string]int{}
	add := func(term string, w float64) {
		if i, ok := seen[term]; ok {
			out[i].weight = max(out[i].weight, w)
			return
		}
		seen[term] = len(out)
		out = append(out, qterm{term, w})
	}
	terms := Terms(query)
	for _, t := range terms {
		add(t, 1)
	}
	if idx.ranker == RankBoosted {
		for _, t := range terms {
			for _, s := range synonyms[t] {
				add(s, synonymWeight)
			}
		}
	}
	return out
}

package aitools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terms returns the search terms of s, in order, as the index sees them:
// s is split into words at anything but letters and digits, and inside
// words at case changes (camelCase, HTTPServer) and between letters and
// digits; words are lowercased, common English words that carry no
// meaning ("the", "a", "of") dropped, and the rest reduced to a stem, so
// that plurals and verb forms meet their base form ("files" and "file",
// "queries" and "query", "created", "creates" and "create").
//
// snake_case, camelCase, kebab-case and dotted names all split into their
// words: "get_file_contents", "getFileContents", "get-file-contents" and
// "get.file.contents" give the same terms.
func Terms(s string) []string {
	return appendTerms(nil, s)
}

// appendTerms appends the terms of s to out.
func appendTerms(out []string, s string) []string {
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] {
			return
		}
		out = append(out, stem(w))
	}
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prev = 0
			continue
		}
		if len(word) > 0 {
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush() // camelCase
			case unicode.IsUpper(prev) && unicode.IsUpper(r):
				// HTTPServer: the last capital of a run starts the next word.
				if next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):]); unicode.IsLower(next) && len(word) > 1 {
					flush()
				}
			case unicode.IsDigit(prev) != unicode.IsDigit(r):
				flush() // base64, v2
			}
		}
		word = append(word, r)
		prev = r
	}
	flush()
	return out
}

// stopWords are words too common to tell tools apart.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true,
	"for": true, "with": true, "and": true, "or": true, "by": true, "from": true,
	"at": true, "as": true, "is": true, "are": true, "be": true, "been": true,
	"this": true, "that": true, "these": true, "those": true, "it": true, "its": true,
	"into": true, "me": true, "my": true, "i": true, "we": true, "our": true, "you": true,
	"your": true, "can": true, "will": true, "should": true, "would": true, "could": true,
	"do": true, "does": true, "please": true, "some": true, "any": true, "which": true,
	"what": true, "how": true, "if": true, "when": true, "there": true, "their": true,
	"them": true, "then": true, "than": true, "so": true, "but": true, "not": true,
	"no": true, "was": true, "were": true, "has": true, "have": true, "had": true,
	"s": true, "e": true, "g": true, "eg": true, "ie": true, "etc": true,
}

// stem reduces a lowercase word to a stem: a light suffix stripper (not
// Porter's), enough to meet plurals and the usual verb forms. Words of
// four letters or fewer, and numbers, are left alone but for a plural -s.
func stem(w string) string {
	if w == "" || w[0] >= '0' && w[0] <= '9' {
		return w
	}
	n := len(w)
	// Plurals.
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y" // queries, directories, entries
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "shes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes")):
		w = w[:n-2] // processes, pushes, searches, boxes
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1] // files, tools (not status, access, analysis)
	}
	n = len(w)
	// Verb forms.
	switch {
	case n > 5 && strings.HasSuffix(w, "ied"):
		w = w[:n-3] + "y" // copied
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3]) // searching, running
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:n-2]) // created, listed, committed
	}
	// A final e, so that "create" meets "created" and "creating".
	if n := len(w); n > 3 && w[n-1] == 'e' && w[n-2] != 'e' {
		w = w[:n-1]
	}
	return w
}

// undouble drops the second of a doubled final consonant: "runn" from
// "running" is "run".
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

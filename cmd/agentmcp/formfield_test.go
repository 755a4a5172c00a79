package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFormFieldChecks: a form asked in the terminal holds each answer to
// what its schema says of it (format, length, range), so that the user
// types it again rather than send what the server refuses; the prompt
// names the format. A birthdate of "Bob" went through.
func TestFormFieldChecks(t *testing.T) {
	fields, err := formFields(json.RawMessage(`{"type":"object","properties":{
		"born":{"type":"string","format":"date"},
		"at":{"type":"string","format":"date-time"},
		"mail":{"type":"string","format":"email"},
		"site":{"type":"string","format":"uri"},
		"nick":{"type":"string","minLength":2,"maxLength":4},
		"age":{"type":"integer","minimum":0,"maximum":150},
		"ratio":{"type":"number","maximum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*formField{}
	for i := range fields {
		byName[fields[i].name] = &fields[i]
	}
	for _, tt := range []struct {
		field, in string
		ok        bool
	}{
		{"born", "Bob", false}, {"born", "2001-02-30", false}, {"born", "2001-02-03", true},
		{"at", "2001-02-03", false}, {"at", "2001-02-03T04:05:06Z", true},
		{"mail", "bob", false}, {"mail", "Bob <bob@example.com>", false}, {"mail", "bob@example.com", true},
		{"site", "example.com", false}, {"site", "https://example.com/me", true},
		{"nick", "b", false}, {"nick", "bobby", false}, {"nick", "bob", true}, {"nick", "éèà", true},
		{"age", "-1", false}, {"age", "151", false}, {"age", "42", true},
		{"ratio", "1.5", false}, {"ratio", "0.5", true},
	} {
		_, ok, err := byName[tt.field].parse(tt.in)
		if got := ok && err == nil; got != tt.ok {
			t.Errorf("%s %q: ok=%v err=%v, want ok=%v", tt.field, tt.in, ok, err, tt.ok)
		}
	}
	if p := byName["born"].prompt(); !strings.Contains(p, "(string, date)") {
		t.Errorf("the prompt %q does not name the format", p)
	}
}

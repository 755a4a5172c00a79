package jsonrpcwire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// anyCorpus are JSON texts, valid and not, for DecodeAny against
// json.Unmarshal.
var anyCorpus = []string{
	`{"echo":"hello"}`, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `"s"`, ` {"a" : [ 1 , 2.5 , -3e+2 , true , false , null , "x" ] } `,
	`{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`, `[[],{},[{}]]`,
	`123456789012345`, `1234567890123456`, `12345678901234567890`, `-999999999999999`, `0.1`, `1E2`, `1e-400`, `1e400`, `-1e400`, `1.7976931348623157e308`, `5e-324`,
	`"\u00e9\u2028\ud83d\ude00 \\ \/ \b\f\n\r\t \""`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\udbff\udfff"`, `"\uDBFF\uDFFF"`, `"\u0000"`,
	"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "{\"\xfe\":\"\\u0041\xfe\"}", "\"é✓\"",
	`{"\u0061":1,"a":2}`,
	"\t\n\r 1 \t\n\r",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	// Invalid.
	``, ` `, `{`, `[`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1 "b":2}`, `{a:1}`, `{1:1}`,
	`01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `0x1`, `NaN`, `tru`, `nul`, `truex`, `1 2`, `"a" x`,
	`"\x"`, `"\'"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"abc`, `"\"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// checkDecodeAny compares DecodeAny(in) with json.Unmarshal into an any:
// both an error, or equal values that encode the same (-0 apart from 0).
func checkDecodeAny(t *testing.T, in []byte) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal(in, &want)
	got, gotErr := DecodeAny(in)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("DecodeAny(%.80q): error %v; json.Unmarshal: %v", in, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if !reflect.DeepEqual(want, got) || string(wb) != string(gb) {
		t.Fatalf("DecodeAny(%.80q) = %.200s; json.Unmarshal: %.200s", in, gb, wb)
	}
}

func TestDecodeAny(t *testing.T) {
	for _, in := range append(anyCorpus, smallCorpus...) {
		checkDecodeAny(t, []byte(in))
	}
}

// FuzzDecodeAny checks that DecodeAny accepts what json.Unmarshal into an
// any accepts and decodes it to the same value.
func FuzzDecodeAny(f *testing.F) {
	for _, in := range append(anyCorpus[:len(anyCorpus)-1], smallCorpus...) {
		if len(in) < 1000 {
			f.Add([]byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodeAny(t, in)
	})
}

func BenchmarkDecodeAny(b *testing.B) {
	in := []byte(`{"echo":"hello","n":3,"tags":["a","b"],"ok":true}`)
	benchRun(b, "DecodeAny", func() error { _, err := DecodeAny(in); return err })
	benchRun(b, "encoding/json", func() error { var v any; return json.Unmarshal(in, &v) })
}

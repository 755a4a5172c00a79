package jsonrpcwire

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// bigResult is a tools/call result holding 64 KiB of log lines, one
// escape (\n) every 64 bytes, like the benchmark program's "big" tool.
func bigResult(tb testing.TB) (msg, result []byte) {
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		line := fmt.Sprintf("%06d INFO request handled path=/api/items/%d status=200 ok", i, i%997)
		b.WriteString((line + strings.Repeat(".", 64))[:63] + "\n")
	}
	res, err := json.Marshal(map[string]any{
		"content": []any{map[string]any{"type": "text", "text": b.String()[:64<<10]}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	msg = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":7,"result":%s}`, res)
	return msg, res
}

func BenchmarkDecodeSharedBig(b *testing.B) {
	msg, _ := bigResult(b)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := DecodeShared(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSplitTextBig(b *testing.B) {
	_, res := bigResult(b)
	b.SetBytes(int64(len(res)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := SplitText(res, 1); !ok {
			b.Fatal("not split")
		}
	}
}

// TestTextSizedExactly: a decoded text is allocated at its exact length
// (65,536 bytes: eight pages; one byte more takes nine), both without an
// escaped backslash and with some, where textString sizes it again at the
// first one.
func TestTextSizedExactly(t *testing.T) {
	const size = 64 << 10
	for _, tc := range []struct {
		name  string
		piece string // repeated: its decoded length divides size
	}{
		{"newlines", "abcdefghijklmn\n"},
		{"backslashes", "abcdefghijkl\\\n\""},
		{"backslash at the end", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text string
			if tc.piece == "" {
				text = strings.Repeat("a", size-2) + "\n\\"
			} else {
				text = strings.Repeat(tc.piece, size/len(tc.piece)+1)[:size]
			}
			enc, err := json.Marshal(text)
			if err != nil {
				t.Fatal(err)
			}
			const runs = 20
			var got string
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				s := scanner{data: enc}
				if got, err = s.textString(); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if got != text {
				t.Fatalf("decoded %d bytes, want the %d encoded", len(got), len(text))
			}
			// Without a backslash, one allocation of the text; with some,
			// a first one short of it and the text.
			want := int64(size)
			if strings.Contains(text, `\`) {
				want = 2 * size
			}
			// A byte too many costs a page (8 KiB); the builders and, with
			// -race, the detector's own allocations take a few hundred.
			if b := int64(after.TotalAlloc-before.TotalAlloc) / runs; b < want || b >= want+4096 {
				t.Errorf("%d bytes allocated per text, want %d (plus a few for the builders)", b, want)
			}
		})
	}
}

package jsonrpcwire

import (
	"encoding/json"
	"fmt"
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

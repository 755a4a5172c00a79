package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestSSESessionExpiryCause: when a POST finds the session gone (404), the
// connection's error stays ErrSessionExpired after the event stream ends
// too, so that the Manager renews the session rather than treat it as a
// plain drop.
func TestSSESessionExpiryCause(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /message?sessionId=1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &sseTransport{endpoint: hs.URL, client: hs.Client(), maxMessageSize: 1 << 20}
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(1))
	err = conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/list"})
	if !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Write = %v, want ErrSessionExpired", err)
	}
	conn.Close() // waits for the stream's reader, which saw the stream end
	if _, err := conn.Read(ctx); !errors.Is(err, ErrSessionExpired) {
		t.Errorf("Read after the expiry = %v, want ErrSessionExpired", err)
	}
}

package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	tr := &SSE{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxMessageSize: 1 << 20}
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

// TestReadBeforeEnd: messages that arrived before a connection ended are
// read before the end is reported (a response read off a stream that then
// closed is still the response), on both HTTP transports.
func TestReadBeforeEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 10
	check := func(t *testing.T, conn interface {
		Read(context.Context) (jsonrpc.Message, error)
	}) {
		t.Helper()
		for i := range n {
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "notifications/message" {
				t.Fatalf("message %d: %v", i, msg)
			}
		}
		if _, err := conn.Read(ctx); err == nil {
			t.Fatal("no error after the last message")
		}
	}
	t.Run("sse", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: endpoint\ndata: /message?sessionId=1\n\n")
			for range n {
				fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			}
			// and the stream ends
		}))
		defer hs.Close()
		tr := &SSE{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxMessageSize: 1 << 20}
		conn, err := tr.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		<-conn.(*sseConn).done // the stream has ended, its messages are queued
		check(t, conn)
	})
	t.Run("streamable", func(t *testing.T) {
		tr := &Streamable{Endpoint: "http://127.0.0.1:1/mcp"}
		conn, err := tr.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		sc := conn.(*streamableConn)
		for range n {
			sc.deliver(&jsonrpc.Request{Method: "notifications/message", Params: []byte(`{}`)})
		}
		sc.fail(errors.New("the connection broke"))
		check(t, conn)
	})
}

// TestSSEMalformedQuoted: a malformed message on the SSE stream ends the
// connection with an error that quotes its start, sanitised.
func TestSSEMalformedQuoted(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /message?sessionId=1\n\ndata: Not JSON \u202e at all\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &SSE{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxMessageSize: 1 << 20}
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Read(ctx)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `: "Not JSON  at all"`) {
		t.Errorf("Read = %v; want ErrProtocol, quoting the message sanitised", err)
	}
}

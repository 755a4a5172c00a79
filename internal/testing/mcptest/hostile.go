package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Flooder is a legacy (2025-11-25, stateful) streamable HTTP server that
// sends requests nobody asked for: a real go-sdk server (Server's tools)
// answers the client's requests, but the standalone GET stream is the
// Flooder's own, where Flood writes server requests with no call in
// flight, and the client's answers to them are recorded, not passed on.
//
// Flood writes the same params bytes for every request, so that the
// Flooder's own memory stays flat however much it sends.
type Flooder struct {
	*HTTPServer
	Server *Server

	streams chan *floodStream // standalone streams opened, newest last
	answers chan FloodAnswer
}

// FloodAnswer is the client's answer to a request sent by Flood.
type FloodAnswer struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// floodStream is an open standalone stream.
type floodStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	closed bool
}

// NewFlooder starts a Flooder on 127.0.0.1, stopped when the test ends.
func NewFlooder(t testing.TB) *Flooder {
	t.Helper()
	f := &Flooder{Server: NewServer("flooder"), streams: make(chan *floodStream, 16), answers: make(chan FloodAnswer, 1024)}
	real := Handler(t, Stateful, func() *mcp.Server { return f.Server.Server })
	f.HTTPServer = ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			f.stream(w, r)
			return
		case http.MethodPost:
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			var a FloodAnswer
			var probe struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &probe) == nil && probe.Method == "" && json.Unmarshal(body, &a) == nil && strings.HasPrefix(a.ID, "flood-") {
				w.WriteHeader(http.StatusAccepted)
				select {
				case f.answers <- a:
				default: // nobody reads them: drop
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		real.ServeHTTP(w, r)
	}))
	return f
}

// stream serves a standalone stream until the client or the server ends it.
func (f *Flooder) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	s := &floodStream{w: w}
	select {
	case f.streams <- s:
	default:
	}
	<-r.Context().Done()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// Answers receives the client's answers to Flood's requests, in the order
// they come.
func (f *Flooder) Answers() <-chan FloodAnswer { return f.answers }

// Flood writes n requests of method with params (a JSON object, written as
// it is) on the client's standalone stream, waiting for the client to open
// one. Their ids are "flood-<first>" to "flood-<first+n-1>".
func (f *Flooder) Flood(ctx context.Context, method string, params []byte, first, n int) error {
	var s *floodStream
	for s == nil {
		select {
		case s = <-f.streams:
		case <-ctx.Done():
			return fmt.Errorf("the client has no standalone stream open: %w", ctx.Err())
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s = nil
		}
	}
	defer s.mu.Unlock()
	f.streams <- s // for the next Flood
	for i := first; i < first+n; i++ {
		for _, b := range [][]byte{fmt.Appendf(nil, `data: {"jsonrpc":"2.0","id":"flood-%d","method":%q,"params":`, i, method), params, []byte("}\n\n")} {
			if _, err := s.w.Write(b); err != nil {
				return err
			}
		}
		s.w.(http.Flusher).Flush()
	}
	return nil
}

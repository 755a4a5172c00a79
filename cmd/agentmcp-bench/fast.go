package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A fastServer answers MCP requests with the go-sdk server's own answers,
// recorded once at startup and replayed with the request's id: the same
// bytes on the wire as the go-sdk server, in its SSE framing, for almost no
// server CPU. With it, what differs between clients on a 2-core machine is
// the clients' own cost, which a real server's work would otherwise hide.
//
// It knows only the requests recorded (the handshake, the four lists, and
// tools/call of "echo" and "big"): the echo result is always that of
// {"text":"hello"}. It offers no GET stream (405), accepts every
// notification (202) and every DELETE (200), and hands out a session id on
// initialize without checking it afterwards.
type fastServer struct {
	results map[string]json.RawMessage // by method, or "tools/call:" + tool name
}

// recordFast records the answers of the go-sdk server at url (in the era
// that version pins) for a fastServer.
func recordFast(ctx context.Context, url, version string) (*fastServer, error) {
	rec := &answerRecorder{results: map[string]json.RawMessage{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "recorder", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return nil, err
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		return nil, err
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		return nil, err
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		return nil, err
	}
	for _, tool := range []string{"echo", "big"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: toolArgs(tool)}); err != nil {
			return nil, err
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &fastServer{results: rec.results}, nil
}

// rpcHead is what the fast server reads of a request.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

func (h *rpcHead) key() string {
	if h.Method == "tools/call" {
		return h.Method + ":" + h.Params.Name
	}
	return h.Method
}

// answerRecorder records the result of each request answered.
type answerRecorder struct {
	mu      sync.Mutex
	results map[string]json.RawMessage
}

func (r *answerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var head rpcHead
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		json.Unmarshal(body, &head)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || len(head.ID) == 0 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	// The answer is an SSE event or plain JSON.
	data := body
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				data = append(data, d...)
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(data, &msg) == nil && len(msg.Result) > 0 {
		r.mu.Lock()
		r.results[head.key()] = msg.Result
		r.mu.Unlock()
	}
	return resp, nil
}

func (s *fastServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	var head rpcHead
	if err := json.Unmarshal(body, &head); err != nil || head.Method == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if len(head.ID) == 0 || string(head.ID) == "null" {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	result, ok := s.results[head.key()]
	if head.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", rand.Text())
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if head.Method == "subscriptions/listen" {
		// A 2026-07-28 listen stream: acknowledged (what it asked for,
		// honoured), then silent until the client closes it.
		var listen struct {
			Params struct {
				Notifications json.RawMessage `json:"notifications"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &listen)
		if len(listen.Params.Notifications) == 0 {
			listen.Params.Notifications = json.RawMessage("{}")
		}
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s},\"notifications\":%s}}\n\n",
			head.ID, listen.Params.Notifications)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		return
	}
	bw := bufio.NewWriterSize(w, 4096)
	bw.WriteString("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":")
	bw.Write(head.ID)
	if ok {
		bw.WriteString(",\"result\":")
		bw.Write(result)
	} else {
		msg, _ := json.Marshal("method not recorded: " + head.Method)
		fmt.Fprintf(bw, `,"error":{"code":-32601,"message":%s}`, msg)
	}
	bw.WriteString("}\n\n")
	bw.Flush()
}

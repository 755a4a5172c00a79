package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// directServer is a scripted streamable HTTP server for CallDirect: every
// POST is sent to posts; a request is answered by answer, by its method.
type directServer struct {
	posts  chan map[string]json.RawMessage
	answer func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string)
}

func (s *directServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "no stream", http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.posts <- msg
	id, ok := msg["id"]
	if !ok {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var method string
	_ = json.Unmarshal(msg["method"], &method)
	s.answer(w, r, id, method)
}

func newDirectConn(t *testing.T, s *directServer, version string) *streamableConn {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	conn, err := (&Streamable{Endpoint: hs.URL, HTTPClient: hs.Client(), MaxMessageSize: 1 << 20}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*streamableConn)
	c.SetNegotiatedVersion(version)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCallDirect: CallDirect returns the decoded result of a JSON or an
// SSE response on the caller's goroutine; what comes before the response
// on its stream (a notification, a server request) is handed to Read; a
// JSON-RPC error is returned as the *jsonrpc.Error; an HTTP failure fails
// the request only; a closed connection fails with ErrConnectionClosed.
func TestCallDirect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := &directServer{posts: make(chan map[string]json.RawMessage, 10), answer: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
		switch method {
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, id)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\",\"params\":{}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":true}}\n\n", id)
		case "prompts/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no prompts"}}`, id)
		default:
			http.Error(w, "nope", http.StatusInternalServerError)
		}
	}}
	c := newDirectConn(t, s, ProtocolLegacy)
	req := func(id, method string) *jsonrpc.Request {
		rid, _ := jsonrpc.MakeID(id)
		return &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(`{}`)}
	}

	var tools mcp.ListToolsResult
	if err := c.CallDirect(ctx, req("a-1", "tools/list"), &tools); err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "t" {
		t.Errorf("tools/list: %+v, %v", tools, err)
	}
	if got := string((<-s.posts)["id"]); got != `"a-1"` {
		t.Errorf("the request went out with id %s", got)
	}

	var res mcp.CallToolResult
	if err := c.CallDirect(ctx, req("a-2", "tools/call"), &res); err != nil {
		t.Fatal(err)
	}
	<-s.posts
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hi" || !res.IsError {
		t.Errorf("tools/call result %+v", res)
	}
	// The notification and the server's request, in order, through Read.
	for _, want := range []string{"notifications/message", "roots/list"} {
		msg, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := msg.(*jsonrpc.Request); !ok || r.Method != want {
			t.Errorf("Read %+v; want %s", msg, want)
		}
	}

	var werr *jsonrpc.Error
	if err := c.CallDirect(ctx, req("a-3", "prompts/list"), &mcp.ListPromptsResult{}); !errors.As(err, &werr) || werr.Code != -32601 {
		t.Errorf("error response: %v; want the -32601 JSON-RPC error", err)
	}
	<-s.posts
	var herr *HTTPError
	if err := c.CallDirect(ctx, req("a-4", "resources/list"), &mcp.ListResourcesResult{}); !errors.As(err, &herr) || herr.StatusCode != 500 {
		t.Errorf("HTTP failure: %v; want an *HTTPError", err)
	}
	<-s.posts
	if err := c.CallDirect(ctx, req("a-5", "tools/list"), &tools); err != nil {
		t.Errorf("after a failed request: %v", err)
	}
	<-s.posts

	c.Close()
	if err := c.CallDirect(ctx, req("a-6", "tools/list"), &tools); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("on a closed connection: %v; want ErrConnectionClosed", err)
	}
}

// TestCallDirectCancel: when the caller gives up, a 2025-11-25 request is
// cancelled with notifications/cancelled naming its id, as go-sdk's
// session does; a 2026-07-28 request's stream is closed, and nothing is
// sent.
func TestCallDirectCancel(t *testing.T) {
	for _, version := range []string{ProtocolLegacy, ProtocolModern} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			streamEnded := make(chan struct{})
			s := &directServer{posts: make(chan map[string]json.RawMessage, 10), answer: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-r.Context().Done() // never answers
				close(streamEnded)
			}}
			c := newDirectConn(t, s, version)
			callCtx, cancelCall := context.WithCancel(ctx)
			id, _ := jsonrpc.MakeID("agentmcp-9")
			errc := make(chan error, 1)
			go func() {
				errc <- c.CallDirect(callCtx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"slow"}`)}, &mcp.CallToolResult{})
			}()
			<-s.posts // the call is at the server
			cancelCall()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("CallDirect = %v; want context.Canceled", err)
			}
			<-streamEnded
			if version == ProtocolModern {
				c.Close() // waits for anything it would have sent
				select {
				case msg := <-s.posts:
					t.Errorf("sent %v after the cancellation; want nothing", msg)
				default:
				}
				return
			}
			msg := <-s.posts
			var method string
			var params mcp.CancelledParams
			_ = json.Unmarshal(msg["method"], &method)
			_ = json.Unmarshal(msg["params"], &params)
			if method != "notifications/cancelled" || params.RequestID != "agentmcp-9" || params.Reason != context.Canceled.Error() {
				t.Errorf("after the cancellation: %s %+v; want notifications/cancelled of agentmcp-9", method, params)
			}
		})
	}
}

// TestCallDirectConnectionEnds: a request in flight when its connection
// fails or closes (the Manager closes a session whose standing stream
// learnt that the server forgot it) ends with ErrConnectionClosed and the
// failure, as go-sdk's session ends its calls in flight, not with the
// cancellation of its HTTP request, which reads as an unreachable server.
func TestCallDirectConnectionEnds(t *testing.T) {
	for _, end := range []string{"close", "fail"} {
		t.Run(end, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			release := make(chan struct{})
			defer close(release)
			s := &directServer{posts: make(chan map[string]json.RawMessage, 10), answer: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
				select { // never answers: the connection ends first
				case <-release:
				case <-r.Context().Done():
				}
			}}
			c := newDirectConn(t, s, ProtocolLegacy)
			id, _ := jsonrpc.MakeID("agentmcp-1")
			errc := make(chan error, 1)
			go func() {
				errc <- c.CallDirect(ctx, &jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(`{}`)}, &mcp.ListToolsResult{})
			}()
			select {
			case <-s.posts:
			case <-ctx.Done():
				t.Fatal("the request never reached the server")
			}
			lost := fmt.Errorf("%w: the server forgot the session", ErrSessionExpired)
			if end == "fail" {
				c.fail(lost)
			}
			c.Close()
			var err error
			select {
			case err = <-errc:
			case <-ctx.Done():
				t.Fatal("CallDirect did not return after the connection ended")
			}
			if !errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, context.Canceled) || IsUnreachable(err) {
				t.Fatalf("CallDirect: %v; want ErrConnectionClosed, not a cancellation or an unreachable server", err)
			}
			if end == "fail" && !errors.Is(err, ErrSessionExpired) {
				t.Errorf("CallDirect: %v; want the failure (ErrSessionExpired) too", err)
			}
		})
	}
}

// TestCallDirectHandshake: a resumed connection answers its handshake to
// a direct caller locally, with the saved result; a caller whose context
// has ended gets its error and nothing is sent or answered.
func TestCallDirectHandshake(t *testing.T) {
	s := &directServer{posts: make(chan map[string]json.RawMessage, 4)}
	hs := httptest.NewServer(s)
	defer hs.Close()
	saved := &mcp.InitializeResult{ProtocolVersion: ProtocolLegacy, ServerInfo: &mcp.Implementation{Name: "saved", Version: "1"},
		Capabilities: &mcp.ServerCapabilities{}}
	conn, err := (&Streamable{Endpoint: hs.URL, HTTPClient: hs.Client(),
		Resume: &Resume{ProtocolVersion: ProtocolLegacy, SessionID: "sid", Result: saved}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*streamableConn)
	c.KeepSession()
	defer c.Close()
	init := func(ctx context.Context, id string) (*mcp.InitializeResult, error) {
		params, _ := json.Marshal(&mcp.InitializeParams{ProtocolVersion: ProtocolLegacy, Capabilities: &mcp.ClientCapabilities{}})
		var res mcp.InitializeResult
		reqID, _ := jsonrpc.MakeID(id)
		return &res, c.CallDirect(ctx, &jsonrpc.Request{ID: reqID, Method: "initialize", Params: params}, &res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := init(ctx, "agentmcp-1"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled caller: %v, want context.Canceled", err)
	}
	res, err := init(context.Background(), "agentmcp-2")
	if err != nil || res.ServerInfo == nil || res.ServerInfo.Name != "saved" {
		t.Fatalf("resumed handshake: %+v, %v", res, err)
	}
	select {
	case msg := <-s.posts:
		t.Errorf("the server got %s", msg["method"])
	default:
	}
}

// TestCallStreamResumed: a 2025-11-25 server that ends a call's event
// stream after an event with an id, before the answer, is asked again with
// a GET naming that id, and the answer on that stream answers the call.
// (The first wait after an event with a new id once shifted by -1 and
// panicked.)
func TestCallStreamResumed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resumed := make(chan string, 1)
	var id json.RawMessage
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.Method {
		case http.MethodPost:
			var msg map[string]json.RawMessage
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &msg); err != nil || msg["id"] == nil {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			id = msg["id"]
			fmt.Fprint(w, "id: e1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
		case http.MethodGet:
			resumed <- r.Header.Get("Last-Event-ID")
			fmt.Fprintf(w, "id: e2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"late\"}]}}\n\n", id)
		}
	}))
	defer hs.Close()
	conn, err := (&Streamable{Endpoint: hs.URL, HTTPClient: hs.Client()}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := conn.(*streamableConn)
	defer c.Close()
	c.SetNegotiatedVersion(ProtocolLegacy)
	c.timing = streamTiming{baseDelay: time.Millisecond, maxDelay: time.Millisecond, maxRetries: 2}
	rid, _ := jsonrpc.MakeID("r-1")
	var res mcp.CallToolResult
	if err := c.CallDirect(ctx, &jsonrpc.Request{ID: rid, Method: "tools/call", Params: json.RawMessage(`{}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if got := <-resumed; got != "e1" {
		t.Errorf("the stream was resumed after %q, want e1", got)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "late" {
		t.Errorf("result %+v; want the answer of the resumed stream", res)
	}
}

// TestListenReissued: a subscriptions/listen whose stream ends with
// nothing read is issued again, each time announcing the lists it
// listens for, until MaxStreamRetries in a row read nothing: the
// connection then fails. One the server cancels (notifications/cancelled
// naming it) is not issued again.
func TestListenReissued(t *testing.T) {
	for _, cancel := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled=%v", cancel), func(t *testing.T) {
			ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
			defer stop()
			s := &directServer{posts: make(chan map[string]json.RawMessage, 10), answer: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) {
				w.Header().Set("Content-Type", "text/event-stream")
				if cancel {
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%s}}\n\n", id)
				}
			}}
			c := newDirectConn(t, s, ProtocolModern)
			c.timing = streamTiming{baseDelay: time.Millisecond, maxDelay: time.Millisecond, maxRetries: MaxStreamRetries}
			rid, _ := jsonrpc.MakeID(float64(9))
			listen := &jsonrpc.Request{ID: rid, Method: "subscriptions/listen", Params: json.RawMessage(`{"notifications":{"toolsListChanged":true}}`)}
			if err := c.Write(ctx, listen); err != nil {
				t.Fatal(err)
			}
			var announced, cancels int
			for {
				msg, err := c.Read(ctx)
				if err != nil {
					break
				}
				switch msg.(*jsonrpc.Request).Method {
				case "notifications/tools/list_changed":
					announced++
				case "notifications/cancelled":
					cancels++
				}
				if cancel && cancels == 1 {
					break
				}
			}
			if cancel {
				if len(s.posts) != 1 || c.failure() != nil {
					t.Errorf("a cancelled listen: %d posts, failure %v; want 1 and none", len(s.posts), c.failure())
				}
				return
			}
			// The last announcement races with the failure that the
			// stream it follows ends in.
			if len(s.posts) != 1+MaxStreamRetries || announced < MaxStreamRetries-1 || c.failure() == nil {
				t.Errorf("%d posts, %d announcements, failure %v; want %d, %d or more, a failure", len(s.posts), announced, c.failure(), 1+MaxStreamRetries, MaxStreamRetries-1)
			}
		})
	}
}

package transport

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldInitialize is a server that reads every POST and answers none: it
// says so on held and waits for the client to go away (or the test to
// end), the way a server that hangs mid-handshake does.
func heldInitialize(t *testing.T) (url string, held <-chan struct{}, gone <-chan struct{}) {
	heldc, gonec, end := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		var msg struct{ Method string }
		json.NewDecoder(r.Body).Decode(&msg)
		if msg.Method != "initialize" {
			http.Error(w, "unexpected "+msg.Method, http.StatusBadRequest)
			return
		}
		heldc <- struct{}{}
		select {
		case <-r.Context().Done():
			gonec <- struct{}{}
		case <-end:
		}
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.Listener = l
	hs.Start()
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() { close(end) })
		hs.Close()
	})
	return hs.URL + "/mcp", heldc, gonec
}

// TestCloseHeldInitialize: a legacy initialize whose answer the server
// holds is cut short on the wire once the connection's Life ends, so that
// closing the connection returns without the answer: whether the caller
// gave up first (the initialize then awaited in the background) or Close
// came first; on the Dialer's connections and through the HTTPClient. The
// background wait is an hour here: only the end of Life can end it.
func TestCloseHeldInitialize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dialer     bool
		callerGone bool // the caller gives up before Life ends
	}{
		{"dialer/close", true, false},
		{"dialer/caller-gone", true, true},
		{"client/close", false, false},
		{"client/caller-gone", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, held, gone := heldInitialize(t)
			life, endLife := context.WithCancel(context.Background())
			defer endLife()
			tr := &Streamable{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}, Life: life, abandonedWait: time.Hour}
			if tc.dialer {
				tr.Dialer = &Dialer{DialContext: (&net.Dialer{}).DialContext}
			}
			defer tr.HTTPClient.CloseIdleConnections()
			conn, err := tr.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			params, _ := json.Marshal(&mcp.InitializeParams{ProtocolVersion: "2025-11-25", ClientInfo: &mcp.Implementation{Name: "t", Version: "1"}, Capabilities: &mcp.ClientCapabilities{}})
			id, _ := jsonrpc.MakeID("init-1")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			called := make(chan error, 1)
			go func() {
				called <- conn.(DirectCaller).CallDirect(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: params}, &mcp.InitializeResult{})
			}()
			safety := time.NewTimer(10 * time.Second) // a safety net, not a speed goal
			defer safety.Stop()
			select {
			case <-held:
			case <-safety.C:
				t.Fatal("the server never received the initialize")
			}
			if tc.callerGone {
				cancel()
				select {
				case err := <-called:
					if err == nil {
						t.Fatal("a cancelled handshake succeeded")
					}
				case <-safety.C:
					t.Fatal("CallDirect did not return once its caller gave up")
				}
			}
			// What the Manager does when it closes: the server's life
			// ends, then the connection closes (go-sdk closes it when
			// its handshake fails).
			endLife()
			closed := make(chan error, 1)
			go func() { closed <- conn.Close() }()
			select {
			case <-closed:
			case <-safety.C:
				t.Fatal("Close waited for the held initialize's answer")
			}
			if !tc.callerGone {
				select {
				case err := <-called:
					if err == nil {
						t.Fatal("a handshake whose connection closed succeeded")
					}
				case <-safety.C:
					t.Fatal("CallDirect waited for the held initialize's answer")
				}
			}
			select {
			case <-gone: // the request was cut short on the wire
			case <-safety.C:
				t.Fatal("the held initialize's request is still open")
			}
		})
	}
}

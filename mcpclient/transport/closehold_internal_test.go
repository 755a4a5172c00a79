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

// heldInitialize is a server that holds its answer to a legacy
// initialize: it reads the request (making a session, as a legacy server
// does), says so on held, and answers, naming the session, only once
// release is called (at the end of the test at the latest). The DELETE of
// that session is reported on deleted.
func heldInitialize(t *testing.T) (url string, held, deleted <-chan struct{}, release func()) {
	heldc, deletedc, end := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete && r.Header.Get(headerSessionID) == "held-1":
			deletedc <- struct{}{}
			return
		case r.Method != http.MethodPost:
			http.Error(w, "unexpected", http.StatusMethodNotAllowed)
			return
		}
		var msg struct{ Method string }
		json.NewDecoder(r.Body).Decode(&msg)
		if msg.Method != "initialize" {
			http.Error(w, "unexpected "+msg.Method, http.StatusBadRequest)
			return
		}
		heldc <- struct{}{}
		<-end
		w.Header().Set(headerSessionID, "held-1")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":"init-1","result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.Listener = l
	hs.Start()
	var once sync.Once
	release = func() { once.Do(func() { close(end) }) }
	t.Cleanup(func() {
		release()
		hs.Close()
	})
	return hs.URL + "/mcp", heldc, deletedc, release
}

// TestCloseHeldInitialize: once the connection's Life ends, closing it
// returns without the answer to a legacy initialize the server holds
// (only the end of Life releases it: the background wait is an hour
// here), whether the caller gave up first (the initialize then awaited
// in the background) or Close came first, on the Dialer's connections and
// through the HTTPClient; the wait goes on by itself, and the session the
// answer names, when it comes, is still ended.
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
			url, held, deleted, release := heldInitialize(t)
			life, endLife := context.WithCancel(context.Background())
			defer endLife()
			tr := &Streamable{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, Life: life, abandonedWait: time.Hour}
			if tc.dialer {
				tr.Dialer = &Dialer{DialContext: (&net.Dialer{}).DialContext}
				defer tr.Dialer.CloseIdleConnections()
			}
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
				release()
				t.Fatal("Close waited for the held initialize's answer")
			}
			if !tc.callerGone {
				select {
				case err := <-called:
					if err == nil {
						t.Fatal("a handshake whose connection closed succeeded")
					}
				case <-safety.C:
					release()
					t.Fatal("CallDirect waited for the held initialize's answer")
				}
			}
			// The server answers at last: the session it made is ended.
			release()
			select {
			case <-deleted:
			case <-safety.C:
				t.Fatal("the abandoned handshake's session was not ended")
			}
		})
	}
}

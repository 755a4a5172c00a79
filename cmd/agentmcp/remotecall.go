package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
)

// watchedCall calls a tool of a running serve with the call's events
// streamed back (client.Client.CallToolWatched): its progress is shown
// on stderr as for a URL, and each question its server asks is asked in
// the terminal when stdin is one, the answer sent to serve; otherwise a
// line says where to answer it (the dashboard, or the API route), and the
// call waits for that answer.
func (r *remote) watchedCall(ctx context.Context, id, tool string, args json.RawMessage, term *terminal) (*mcp.CallToolResult, error) {
	// The questions being asked, by elicitation id: each prompt's cancel.
	var (
		mu      sync.Mutex
		prompts = map[string]context.CancelFunc{}
		wg      sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		for _, cancel := range prompts {
			cancel()
		}
		mu.Unlock()
		wg.Wait()
	}()
	w := &client.CallWatch{
		Task: term.task, // tasks.go
		Progress: func(p client.Progress) {
			term.progress(&mcp.ProgressNotificationParams{Progress: p.Progress, Total: p.Total, Message: p.Message})
		},
		Elicitation: func(e api.Elicitation) {
			if term.in == nil {
				term.elsewhere(e, r.dashboardURL(), r.c.URL()+"/elicitations/"+url.PathEscape(e.ID))
				return
			}
			pctx, cancel := context.WithCancel(ctx)
			mu.Lock()
			prompts[e.ID] = cancel
			mu.Unlock()
			wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(prompts, e.ID)
					mu.Unlock()
					cancel()
				}()
				r.ask(pctx, term, e)
			})
		},
		ElicitationEnded: func(eid string) {
			mu.Lock()
			cancel, asking := prompts[eid]
			mu.Unlock()
			if asking {
				cancel()
				term.say("  (answered elsewhere)\n")
			}
		},
	}
	raw, err := r.c.CallToolWatched(ctx, id, tool, args, w)
	if err != nil {
		return nil, err
	}
	return fromWire[*mcp.CallToolResult](raw)
}

// ask asks question e in the terminal and sends the answer to serve,
// unless ctx ends first (the question was answered elsewhere, or the call
// ended).
func (r *remote) ask(ctx context.Context, term *terminal, e api.Elicitation) {
	req := &input.ElicitationRequest{ServerID: e.ServerID, Mode: e.Mode, Message: e.Message, RequestedSchema: e.RequestedSchema, URL: e.URL}
	who := e.ServerID
	if name := term.serverName; name != "" {
		who = name
	}
	ask := term.form
	if e.Mode == "url" {
		ask = term.url
	}
	res, err := ask(ctx, req, who)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		term.say("  %s\n", oneLine(err.Error()))
		res = &mcp.ElicitResult{Action: "cancel"}
	}
	answer := api.ElicitationAnswer{Action: res.Action, Content: res.Content}
	if err := r.c.AnswerElicitation(ctx, e.ID, answer); err != nil && ctx.Err() == nil {
		var aerr *api.APIError
		if errors.As(err, &aerr) && aerr.Code == api.CodeUnknownElicitation {
			term.say("  (answered elsewhere, or the call ended)\n")
			return
		}
		term.say("  sending the answer failed: %s\n", oneLine(r.explain(err).Error()))
	}
}

// dashboardURL is the dashboard of the agent.
func (r *remote) dashboardURL() string {
	return r.base + "/?agent=" + url.QueryEscape(r.agent)
}

// elsewhere says, on stderr, that the call's server asks a question this
// terminal cannot (stdin is not a terminal), and where to answer it: a
// line on a terminal, else a JSON line as for progress. The call waits
// for the answer.
func (t *terminal) elsewhere(e api.Elicitation, dashboard, route string) {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	if t.errTTY == nil {
		line := struct {
			Type      string `json:"type"`
			Tool      string `json:"tool"`
			ID        string `json:"id"`
			Mode      string `json:"mode"`
			Message   string `json:"message,omitempty"`
			Dashboard string `json:"dashboard"`
			Answer    string `json:"answer"`
		}{"elicitation", t.tool, e.ID, e.Mode, oneLine(e.Message), dashboard, "POST " + route}
		if b, err := json.Marshal(line); err == nil {
			t.stderr.Write(append(b, '\n'))
		}
		return
	}
	t.clearLineLocked()
	fmt.Fprintf(t.errTTY, "tool %s asks the user (%q) and stdin is not a terminal: answer it in the dashboard, %s, or with POST %s; the call waits\n",
		oneLine(t.tool), oneLine(e.Message), dashboard, route)
}

// settleWait bounds how long ls waits for the servers of an agent it
// woke to connect.
const settleWait = 5 * time.Second

// settling reports whether a server of st is on its way to a state
// (connecting, connected but not yet discovered, discovering).
func settling(st agent.MCPServersState) bool {
	for _, s := range st.Servers {
		switch mcpclient.State(s.State) {
		case mcpclient.StateConnecting, mcpclient.StateConnected, mcpclient.StateDiscovering:
			return true
		}
	}
	return false
}

// settle returns st, or, when some of its servers are still connecting
// (asking woke the agent), the first state in which none is, as the
// agent's stream reports it, waiting at most settleWait: the last state
// seen then.
func (r *remote) settle(ctx context.Context, st agent.MCPServersState) agent.MCPServersState {
	if !settling(st) {
		return st
	}
	ctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	conn, err := client.Dial(ctx, r.c.URL(), &client.Options{Token: r.token})
	if err != nil {
		return st
	}
	defer conn.Close()
	settled := make(chan agent.MCPServersState, 1)
	dispose := conn.OnMCPUpdate(func(ws api.MCPServersState) {
		if s, err := fromWire[agent.MCPServersState](ws); err == nil && !settling(s) {
			select {
			case settled <- s:
			default:
			}
		}
	})
	defer dispose()
	select {
	case s := <-settled:
		return s
	case <-ctx.Done():
	case <-conn.Done():
	}
	if s, err := fromWire[agent.MCPServersState](conn.MCPServers()); err == nil {
		return s
	}
	return st
}

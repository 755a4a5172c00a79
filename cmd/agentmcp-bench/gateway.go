package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/gateway"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store/sqlite"
)

// agentCaller calls a tool through an agent directly (Agent.CallTool).
type agentCaller struct {
	a  *agent.Agent
	id string
}

func (c *agentCaller) call(ctx context.Context, tool string) error {
	return checkResult(c.a.CallTool(ctx, c.id, tool, toolArgs(tool), nil))
}

func (c *agentCaller) close() {}

// gatewayCaller calls a tool of server "up" through the gateway, by its
// gateway name.
type gatewayCaller struct{ raw *rawCaller }

func (c *gatewayCaller) call(ctx context.Context, tool string) error {
	res, err := c.raw.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_up_" + tool, Arguments: toolArgs(tool)})
	return checkResult(res, err)
}

func (c *gatewayCaller) close() { c.raw.close() }

// managerGatewayCaller calls a tool of server "up" through the gateway
// with agentmcp's own client (a Manager that has the gateway as its
// server "s").
type managerGatewayCaller struct{ mc *managerCaller }

func (c *managerGatewayCaller) call(ctx context.Context, tool string) error {
	return checkResult(c.mc.m.CallTool(ctx, "s", "tool_up_"+tool, toolArgs(tool), nil))
}

func (c *managerGatewayCaller) close() { c.mc.close() }

// gatewayClients are the downstream clients measured through the gateway:
// agentmcp's own (the Manager, whose figures are the gateway's overhead:
// the hop the gateway adds, made by a lean client) and go-sdk's.
var gatewayClients = []struct{ name, label string }{
	{"manager", "Manager via the gateway"},
	{"go-sdk", "go-sdk client via the gateway"},
}

// runGateway measures what an agent's MCP endpoint (package gateway) adds
// to a call: the same echo call made through the gateway by agentmcp's
// Manager and by a go-sdk client, in each era, and by the agent itself,
// side by side in each repetition; the upstream server is the go-sdk server of the server
// process (2026-07-28), everything on 127.0.0.1.
func runGateway(ctx context.Context, c *config, srv *serverProc) (string, []figure, error) {
	dir, err := os.MkdirTemp("", "agentmcp-bench-gateway-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"), nil)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	a, err := agent.Open(ctx, st, "bench", "gateway", &agent.Options{Manager: &mcpclient.Options{EndSessionsOnClose: true}})
	if err != nil {
		return "", nil, err
	}
	defer a.Close(context.Background())
	res, err := a.AddMCPServer(ctx, "up", srv.urls.Main+pathStateless, &agent.AddOptions{ID: "up"})
	if err != nil {
		return "", nil, err
	}
	if res.State != mcpclient.StateReady {
		return "", nil, fmt.Errorf("upstream server %s", res.State)
	}
	g := gateway.New(a, nil)
	defer g.Close(context.Background())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: g}
	go hs.Serve(l)
	defer hs.Close()
	endpoint := "http://" + l.Addr().String() + "/mcp"

	const tool = "echo"
	direct := &agentCaller{a: a, id: "up"}
	w := workload{name: "echo", tool: tool, conc: 1, n: c.seqCalls}
	type cell struct {
		client, era string
		c           caller
	}
	var cells []cell
	for _, gc := range gatewayClients {
		for _, e := range eras {
			var cl caller
			switch gc.name {
			case "manager":
				mc, err := newManagerCaller(ctx, endpoint, e.name, "")
				if err != nil {
					return "", nil, fmt.Errorf("connecting the Manager to the gateway in %s: %w", e.name, err)
				}
				cl = &managerGatewayCaller{mc}
			default:
				raw, err := newRawCaller(ctx, endpoint, e.name, newHTTPClient())
				if err != nil {
					return "", nil, fmt.Errorf("connecting to the gateway in %s: %w", e.name, err)
				}
				cl = &gatewayCaller{raw}
			}
			defer cl.close()
			cells = append(cells, cell{gc.name, e.name, cl})
		}
	}
	if err := warm(ctx, direct, tool, 100); err != nil {
		return "", nil, err
	}
	for _, cl := range cells {
		if err := warm(ctx, cl.c, tool, 100); err != nil {
			return "", nil, err
		}
	}
	directP50 := make([]float64, 0, c.reps)
	over := map[string][]float64{}
	p50 := map[string][]float64{}
	for rep := range c.reps {
		progress(c.stderr, "gateway: repetition %d/%d", rep+1, c.reps)
		d, err := measure(ctx, direct, w)
		if err != nil {
			return "", nil, err
		}
		directP50 = append(directP50, d.p50.Seconds()*1e3)
		for _, cl := range cells {
			s, err := measure(ctx, cl.c, w)
			if err != nil {
				return "", nil, err
			}
			k := cl.client + " " + cl.era
			p50[k] = append(p50[k], s.p50.Seconds()*1e3)
			over[k] = append(over[k], (s.p50-d.p50).Seconds()*1e3)
		}
	}
	t := newTable("client", "era", "p50 ms")
	t.align = []bool{false, false, true}
	t.add("Agent.CallTool (direct)", "2026-07-28 upstream", fmt.Sprintf("%.3f", median(directP50)))
	for _, cl := range cells {
		label := ""
		for _, gc := range gatewayClients {
			if gc.name == cl.client {
				label = gc.label
			}
		}
		t.add(label, cl.era, fmt.Sprintf("%.3f", median(p50[cl.client+" "+cl.era])))
	}
	if len(over) != len(cells) {
		return "", nil, errors.New("gateway: a client was not measured")
	}
	figs := []figure{
		{name: "gateway_overhead_ms_p50", value: median(over["manager 2025-11-25"]), unit: " ms", goal: "<= 0.5",
			note: "a call through the agent's MCP endpoint by agentmcp's Manager (2025-11-25 session) minus Agent.CallTool, p50"},
		{name: "gateway_overhead_ms_p50_stateless", value: median(over["manager 2026-07-28"]), unit: " ms", goal: "<= 0.5",
			note: "the same with a 2026-07-28 client"},
		{name: "gateway_overhead_ms_p50_gosdk", value: median(over["go-sdk 2025-11-25"]), unit: " ms",
			note: "the same through go-sdk's client (2025-11-25 session): the gateway's hop plus go-sdk's client"},
		{name: "gateway_overhead_ms_p50_gosdk_stateless", value: median(over["go-sdk 2026-07-28"]), unit: " ms",
			note: "the same with go-sdk's 2026-07-28 client"},
	}
	return "Gateway: one echo call through an agent's MCP endpoint against the agent's own call (loopback, sequential)\n" + t.String(), figs, nil
}

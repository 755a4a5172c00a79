package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/policy"
)

func policyCommand() command {
	return command{
		name:    "policy",
		summary: "show or set an agent's tool policy: which tools its callers may call, which ask first",
		usage: `Usage:
  agentmcp policy [flags]
  agentmcp policy [flags] set FILE
  agentmcp policy [flags] preset NAME

An agent's tool policy decides, for each call of one of its tools, whether it
runs (allow), is refused (deny) or waits for a person's approval (ask; see
agentmcp approvals), and how often it may run. It holds for every caller:
the agent's own model (llm), the HTTP API and this CLI (api), and the
clients of its MCP endpoint (gateway). Denied tools are not listed either.

Without arguments, policy prints the policy as JSON. "set FILE" replaces it
with the JSON document in FILE ("-" for standard input); "preset NAME" with a
preset: "open" (allow everything, an agent's policy when none is set) or
"cautious" (allow read-only tools, ask for the others). Either prints the
policy now in force.

The document:
  {"default": "allow",
   "rules": [
     {"match": {"tools": ["github/delete_*"]}, "action": "deny"},
     {"match": {"annotations": {"destructiveHint": true}}, "action": "ask"},
     {"match": {"tools": ["search/*"], "callers": ["llm"]}, "action": "allow", "rate": "10/m"}]}
Rules are tried in order; the first whose match matches decides, else the
default (allow when absent). A match holds when all it gives hold: tools
(SERVER or SERVER/TOOL patterns, * and ? wildcards), servers (server id
patterns), annotations (the tool's hints; one that does not state a hint has
the MCP specification's default: readOnlyHint false, destructiveHint true,
idempotentHint false, openWorldHint true), callers (llm, api, gateway). A rate
("N/s", "N/m", "N/h") on allow or ask limits the calls of each tool.
"audit": {"arguments": "full"} makes the agent's audit log (agentmcp audit)
keep each call's arguments, sealed by the store's key, besides their hash.

` + targetFlagsUsage + `
Examples:
  agentmcp policy
  agentmcp policy preset cautious
  agentmcp policy set policy.json
`,
		run: runPolicy,
	}
}

func runPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy")
	var tf targetFlags
	tf.register(fs)
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	var want *policy.Policy
	switch {
	case len(positional) == 0:
	case positional[0] == "set" && len(positional) == 2:
		p, err := readPolicyFile(ctx, positional[1])
		if err != nil {
			return err
		}
		want = &p
	case positional[0] == "preset" && len(positional) == 2:
		p, ok := policy.Preset(positional[1])
		if !ok {
			return usageErrorf("unknown preset %s (want %s)", quoteArg(positional[1]), strings.Join(policy.Presets(), " or "))
		}
		want = &p
	case positional[0] == "set" || positional[0] == "preset":
		return usageErrorf("policy %s takes one argument", positional[0])
	default:
		return usageErrorf("unexpected argument %s (want set FILE or preset NAME)", quoteArg(positional[0]))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	if want == nil {
		tf.access = reading
	}
	b, err := tf.open(ctx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	var p policy.Policy
	switch b := b.(type) {
	case *remote:
		var got api.Policy
		if want != nil {
			got, err = b.c.SetPolicy(ctx, wirePolicy(*want))
		} else {
			got, err = b.c.Policy(ctx)
		}
		if err != nil {
			return b.explain(err)
		}
		data, _ := json.Marshal(got)
		if p, err = policy.Parse(data); err != nil {
			return fmt.Errorf("the server's policy: %w", err)
		}
	case *direct:
		if want != nil {
			if err := b.a.SetPolicy(ctx, *want); err != nil {
				return err
			}
		}
		p = b.a.Policy()
	default:
		return errors.New("policy: unsupported target")
	}
	return writeJSON(stdout, p)
}

// readPolicyFile reads and checks a policy document ("-": standard input).
func readPolicyFile(ctx context.Context, name string) (policy.Policy, error) {
	var (
		data []byte
		err  error
	)
	if name == "-" {
		in := stdinOf(ctx)
		if in == nil {
			return policy.Policy{}, usageErrorf("no standard input to read the policy from")
		}
		data, err = io.ReadAll(io.LimitReader(in, 1<<20))
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return policy.Policy{}, usageErrorf("policy set: %v", err)
	}
	p, err := policy.Parse(data)
	if err != nil {
		return policy.Policy{}, usageErrorf("policy set %s: %v", quoteArg(name), err)
	}
	return p, nil
}

// wirePolicy is p as the API's JSON.
func wirePolicy(p policy.Policy) api.Policy {
	var out api.Policy
	data, _ := json.Marshal(p)
	_ = json.Unmarshal(data, &out) // the same JSON, field for field
	return out
}

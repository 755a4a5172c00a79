package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

func pinsCommand() command {
	return command{
		name:    "pins",
		summary: "list an agent's pinned tool definitions; accept or reject a changed one",
		usage: `Usage:
  agentmcp pins [flags]
  agentmcp pins accept [flags] SERVER TOOL
  agentmcp pins reject [flags] SERVER TOOL

The first time an agent lists a server's tools it pins each definition (name,
title, description, schemas, annotations). A tool whose definition changes
later is "changed": by default (the policy's pins reaction "block") it is left
out of the agent's tools and its calls are refused (409 tool_changed) until a
person accepts it. A tool that appears later is "new"; one that disappears,
"removed".

agentmcp pins lists the pins, those that need a look first, each with the
fields that changed and their old and new text. "pins accept" pins the
definition the server lists now; "pins reject" keeps the tool out until it
is accepted or its server removed.

Flags:
  --by NAME        with accept or reject: who decides, recorded in the audit
                   log (default: your user name on this machine; --by ""
                   records none). It is a label you state, not an identity
                   the server checks
  --json           print the pins as JSON, as the API answers

` + targetFlagsUsage,
		run: runPins,
	}
}

func runPins(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("pins")
	var tf targetFlags
	tf.register(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	by := osUserName()
	fs.StringVar(&by, "by", by, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	decision := ""
	if len(positional) > 0 {
		decision, positional = positional[0], positional[1:]
	}
	switch {
	case decision != "" && decision != agent.PinAccept && decision != agent.PinReject:
		return usageErrorf("unexpected argument %s (want pins accept SERVER TOOL or pins reject SERVER TOOL)", quoteArg(decision))
	case decision != "" && len(positional) != 2:
		return usageErrorf("pins %s takes a server id and a tool name", decision)
	}
	if err := agent.CheckDecider(by); err != nil {
		return usageErrorf("--by: %v", err)
	}
	ctx, cancel := context.WithTimeout(agent.WithDecider(ctx, by), tf.timeout)
	defer cancel()
	tf.mustExist = true
	if decision == "" {
		tf.access = reading
	}
	b, err := tf.open(ctx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	if decision != "" {
		return decidePin(ctx, b, decision, positional[0], positional[1], by, asJSON, stdout)
	}
	var list []api.Pin
	switch b := b.(type) {
	case *remote:
		if list, err = b.c.Pins(ctx); err != nil {
			return b.explain(err)
		}
	case *direct:
		for _, p := range b.a.Pins() {
			list = append(list, p.API())
		}
	default:
		return errors.New("pins: unsupported target")
	}
	if list == nil {
		list = []api.Pin{}
	}
	if asJSON {
		return writeJSON(stdout, api.PinsResponse{Pins: list})
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(stdout, "agent %s has no pinned tools\n", tf.agent)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSTATE\tBLOCKED\tFINGERPRINT\tCHANGED")
	for _, p := range list {
		blocked := "no"
		if p.Blocked {
			blocked = "yes"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\n", oneLine(p.Server), oneLine(p.Tool), p.State, blocked, shorten(p.Fingerprint, 12), p.ChangedAt)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range list {
		for _, c := range p.Diff {
			fmt.Fprintf(stdout, "\n%s/%s: %s changed\n  - %s\n  + %s\n", oneLine(p.Server), oneLine(p.Tool), c.Field,
				oneLine(shorten(c.Old, 400)), oneLine(shorten(c.New, 400)))
		}
	}
	return nil
}

func decidePin(ctx context.Context, b backend, decision, server, tool, by string, asJSON bool, stdout io.Writer) error {
	var (
		p   api.Pin
		err error
	)
	switch b := b.(type) {
	case *remote:
		if p, err = b.c.AnswerPin(ctx, server, tool, api.PinDecisionRequest{Decision: decision, By: by}); err != nil {
			return b.explain(err)
		}
	case *direct:
		got, err := b.a.DecidePin(ctx, server, tool, decision)
		if err != nil {
			return err
		}
		p = got.API()
	default:
		return fmt.Errorf("pins %s: unsupported target", decision)
	}
	if asJSON {
		return writeJSON(stdout, api.PinResponse{Pin: p})
	}
	verb := map[string]string{agent.PinAccept: "accepted", agent.PinReject: "rejected"}[decision]
	_, err = fmt.Fprintf(stdout, "%s %s/%s: %s\n", verb, oneLine(p.Server), oneLine(p.Tool), p.State)
	return err
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
)

func approvalsCommand() command {
	return command{
		name:    "approvals",
		summary: "list the tool calls an agent's policy asks a person to approve",
		usage: `Usage:
  agentmcp approvals [flags]

Lists the agent's approvals: the calls its tool policy answers "ask" (see
agentmcp policy), stored before anything is sent to the server. Pending ones
come first, oldest first, then the others, most recent first. Each shows its
id, state (pending, approved, denied, expired, done), the tool, the caller,
when it expires and its arguments. Answer one with agentmcp approve ID or
agentmcp deny ID.

Flags:
  --json           print the approvals as JSON, as GET .../approvals answers

` + targetFlagsUsage,
		run: runApprovals,
	}
}

func approveCommand() command {
	return command{
		name:    "approve",
		summary: "approve a pending tool call: it runs once",
		usage: `Usage:
  agentmcp approve [flags] ID

Approves the pending approval ID (see agentmcp approvals): its call runs once,
with the arguments it was asked with, and its result is stored with it.
Approving it again changes nothing.

Flags:
  --remember       also allow every call of this tool from now on (adds an
                   allow rule ahead of the policy's rules)
  --by NAME        who answers, recorded with the approval and in the
                   audit log (default: your user name on this machine;
                   --by "" records none). It is a label you state, not
                   an identity the server checks
  --json           print the approval as JSON

` + targetFlagsUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runAnswer(ctx, "approve", args, stdout, stderr)
		},
	}
}

func denyCommand() command {
	return command{
		name:    "deny",
		summary: "deny a pending tool call, with a reason its caller reads",
		usage: `Usage:
  agentmcp deny [flags] ID

Denies the pending approval ID (see agentmcp approvals): its call does not run,
and its caller (a model, say) is told, with the reason.

Flags:
  --reason TEXT    why, for the caller
  --by NAME        who answers, recorded with the approval and in the
                   audit log (default: your user name on this machine;
                   --by "" records none). It is a label you state, not
                   an identity the server checks
  --json           print the approval as JSON

` + targetFlagsUsage,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runAnswer(ctx, "deny", args, stdout, stderr)
		},
	}
}

func runApprovals(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("approvals")
	var tf targetFlags
	tf.register(fs)
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("unexpected argument %s", quoteArg(positional[0]))
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	tf.mustExist = true
	tf.access = reading
	b, err := tf.open(ctx, stderr, dormant)
	if err != nil {
		return err
	}
	defer b.close()
	var list []api.Approval
	switch b := b.(type) {
	case *remote:
		if list, err = b.c.Approvals(ctx); err != nil {
			return b.explain(err)
		}
	case *direct:
		aps, err := b.a.Approvals(ctx)
		if err != nil {
			return err
		}
		for _, ap := range aps {
			list = append(list, ap.API())
		}
	default:
		return errors.New("approvals: unsupported target")
	}
	if list == nil {
		list = []api.Approval{}
	}
	if asJSON {
		return writeJSON(stdout, api.ApprovalsResponse{Approvals: list})
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(stdout, "agent %s has no approvals\n", tf.agent)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tTOOL\tCALLER\tEXPIRES\tARGUMENTS")
	for _, ap := range list {
		expires := "-"
		if ap.State == "pending" {
			expires = ap.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%s\t%s\n", oneLine(ap.ID), ap.State, oneLine(ap.Server), oneLine(ap.Tool),
			oneLine(ap.Caller), expires, oneLine(shorten(string(ap.Arguments), 80)))
	}
	return tw.Flush()
}

func runAnswer(ctx context.Context, decision string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(decision)
	var tf targetFlags
	tf.register(fs)
	var (
		remember, asJSON bool
		reason           string
		by               = osUserName()
	)
	fs.StringVar(&by, "by", by, "")
	if decision == "approve" {
		fs.BoolVar(&remember, "remember", false, "")
	} else {
		fs.StringVar(&reason, "reason", "", "")
	}
	fs.BoolVar(&asJSON, "json", false, "")
	positional, _, _, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usageErrorf("%s takes one approval id (see agentmcp approvals)", decision)
	}
	id := positional[0]
	if err := agent.CheckDecider(by); err != nil {
		return usageErrorf("--by: %v", err)
	}
	ctx, cancel := context.WithTimeout(agent.WithDecider(ctx, by), tf.timeout)
	defer cancel()
	tf.mustExist = true
	mode := dormant
	if decision == "approve" {
		mode = connected // with a database, the approved call runs here
	}
	b, err := tf.open(ctx, stderr, mode)
	if err != nil {
		return err
	}
	defer b.close()
	var ap api.Approval
	switch b := b.(type) {
	case *remote:
		ap, err = b.c.AnswerApproval(ctx, id, api.AnswerApprovalRequest{Decision: decision, Remember: remember, Reason: reason, By: by})
		if err != nil {
			return b.explain(err)
		}
	case *direct:
		var got agent.Approval
		if decision == "approve" {
			// The call runs here: the database's agent is this process's.
			if got, err = b.a.Approve(ctx, id, remember); err == nil {
				got, err = waitAnswered(ctx, b.a, id)
			}
		} else {
			got, err = b.a.Deny(ctx, id, reason)
		}
		if err != nil {
			return err
		}
		ap = got.API()
	default:
		return fmt.Errorf("%s: unsupported target", decision)
	}
	if asJSON {
		return writeJSON(stdout, api.ApprovalResponse{Approval: ap})
	}
	switch {
	case decision == "deny":
		_, err = fmt.Fprintf(stdout, "denied %s (%s/%s)\n", oneLine(ap.ID), oneLine(ap.Server), oneLine(ap.Tool))
	case ap.State == "done" && len(ap.Result) > 0:
		fmt.Fprintf(stdout, "approved %s (%s/%s); its result:\n", oneLine(ap.ID), oneLine(ap.Server), oneLine(ap.Tool))
		err = writeJSON(stdout, json.RawMessage(ap.Result))
	default:
		_, err = fmt.Fprintf(stdout, "approved %s (%s/%s): %s\n", oneLine(ap.ID), oneLine(ap.Server), oneLine(ap.Tool), ap.State)
	}
	return err
}

// waitAnswered waits until an approved call ran (the agent of a database
// runs it in this process, which must not exit before).
func waitAnswered(ctx context.Context, a *agent.Agent, id string) (agent.Approval, error) {
	for {
		ap, err := a.Approval(ctx, id)
		if err != nil || ap.State != "approved" {
			return ap, err
		}
		select {
		case <-ctx.Done():
			return ap, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// approvalPending says which approval a call waits for, when its time
// ran out before a person answered; nil for any other error.
func approvalPending(err error) error {
	var (
		pending *agent.ApprovalPendingError
		aerr    *api.APIError
	)
	switch {
	case errors.As(err, &pending):
		return fmt.Errorf("%v: answer it with agentmcp approve %s or agentmcp deny %s", err, pending.Approval.ID, pending.Approval.ID)
	case errors.As(err, &aerr) && aerr.Code == api.CodeApprovalPending:
		return fmt.Errorf("%s: answer it with agentmcp approve or deny (see agentmcp approvals)", aerr.Message)
	}
	return nil
}

// shorten cuts s to n bytes at most, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// osUserName is the default --by of approve and deny: the user this
// process runs as (its login name), "" when it cannot be told or is not a
// valid decider label.
func osUserName() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	if agent.CheckDecider(name) != nil {
		return ""
	}
	return name
}

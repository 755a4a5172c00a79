package main

import (
	"errors"
	"net/url"
	"os"
	"strings"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient/explain"
	"github.com/agentmcp/agentmcp/server"
)

// remoteFailure is a connect_failed answer of a running agentmcp serve,
// kept whole so that add and reconnect can say what to do next (its text
// is the answer's message).
type remoteFailure struct{ aerr *api.APIError }

func (e *remoteFailure) Error() string { return e.aerr.Message }
func (e *remoteFailure) Unwrap() error { return e.aerr }

// failureText is what add (verb "adding") and reconnect ("reconnecting")
// print when err is the failed connection of the stored server named
// name: the server's name, what failed in short (what ls shows), what
// happens to the server now and the command that tries it again, then the
// whole error once. ok is false for other errors.
func failureText(verb, name string, b backend, err error) (msg string, ok bool) {
	var (
		rf                  *remoteFailure
		cerr                *agent.ConnectError
		id, summary, detail string
		remote              bool
	)
	switch {
	case errors.As(err, &rf):
		if rf.aerr.ServerID == "" {
			return "", false // nothing was saved
		}
		id, summary, detail, remote = rf.aerr.ServerID, rf.aerr.Summary, rf.aerr.Detail, true
		if rf.aerr.ServerName != "" {
			name = rf.aerr.ServerName
		}
	case errors.Is(err, agent.ErrNotSaved):
		return "", false // nothing was saved: nothing to reconnect
	case errors.As(err, &cerr):
		id, summary, detail = cerr.ID, explain.Summary(cerr.Err), cerr.Err.Error()
		if cerr.Name != "" {
			name = cerr.Name
		}
	default:
		return "", false
	}
	if summary == "" {
		summary = explain.Summary(err)
	}
	var out strings.Builder
	out.WriteString(verb + " " + oneLine(name) + ": " + summary + ". ")
	again := "agentmcp reconnect" + againFlags(b) + " " + shellWord(id)
	switch {
	case remote && verb == "adding":
		out.WriteString("It is saved and retried in the background; to try it now: " + again)
	case remote:
		out.WriteString("It keeps being retried in the background (agentmcp ls shows the next try); to try it now: " + again)
	case verb == "adding":
		out.WriteString("It is saved: agentmcp serve retries it; to try it now: " + again)
	default:
		out.WriteString("agentmcp serve retries it; to try it now: " + again)
	}
	if detail = oneLine(detail); detail != "" && detail != summary {
		out.WriteString(". Detail: " + detail)
	}
	return out.String(), true
}

// againFlags is the target flags that name b's agent in another command,
// each with a leading space: --db, --agent, and --server unless it is
// the default or $AGENTMCP_SERVER (a --postgres DSN, which may hold a
// password, is written DSN; --token is never repeated).
func againFlags(b backend) string {
	var out strings.Builder
	ns := server.DefaultAgent
	switch b := b.(type) {
	case *remote:
		if b.base != defaultServer && b.base != strings.TrimSuffix(os.Getenv(envServer), "/") {
			out.WriteString(" --server " + shellWord(b.base))
		}
		ns = b.agent
	case *direct:
		if b.display == postgresDisplay {
			out.WriteString(" --postgres DSN")
		} else {
			out.WriteString(" --db " + shellWord(b.display))
		}
		ns = b.a.Namespace()
	}
	if ns != server.DefaultAgent {
		out.WriteString(" --agent " + shellWord(ns))
	}
	return out.String()
}

// shellWord quotes s for a shell when it holds anything but letters,
// digits and -_./:@=,+ (single quotes).
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=,+", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// schemeHint is the URL a server URL without a scheme was likely meant
// to be ("127.0.0.1:3101/mcp" -> "http://127.0.0.1:3101/mcp"; "https://"
// for a host that is not a loopback one), without userinfo, query and
// fragment; "" when raw has a scheme or is no host even with one.
func schemeHint(raw string) string {
	if raw == "" || strings.Contains(raw, "://") {
		return ""
	}
	u, err := url.Parse("http://" + raw)
	if err != nil || u.Hostname() == "" || !strings.Contains(u.Hostname(), ".") && u.Port() == "" && !isLoopbackHost(u.Hostname()) {
		return ""
	}
	if !isLoopbackHost(u.Hostname()) {
		u.Scheme = "https"
	}
	return redactedURL(u)
}

// isLoopbackHost reports whether host names this machine.
func isLoopbackHost(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasPrefix(host, "127.") || host == "::1"
}

// didYouMean is "; did you mean URL?" for a server URL without a scheme
// (schemeHint), else "".
func didYouMean(raw string) string {
	if h := schemeHint(raw); h != "" {
		return "; did you mean " + h + "?"
	}
	return ""
}

// commandLine is a stdio server's command as a shell takes it, each word
// quoted by shellWord.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellWord(a)
	}
	return strings.Join(words, " ")
}

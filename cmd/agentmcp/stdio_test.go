package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentmcp/agentmcp/internal/testing/peers"
)

// TestStdio runs server-everything (npm) over stdio; it skips unless
// scripts/install-test-deps has installed it.
func TestStdio(t *testing.T) {
	cmd := peers.EverythingCommand(t)
	if len(cmd.Env) > 0 {
		t.Fatalf("EverythingCommand needs environment %q, which agentmcp cannot pass", cmd.Env)
	}
	server := append([]string{"--", cmd.Path}, cmd.Args...)

	t.Run("inspect", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, append([]string{"inspect"}, server...)...)
		r.mustSucceed(t)
		var got inspected
		decode(t, r.stdout, &got)
		if got.Transport != "stdio" || got.SessionID != "" {
			t.Errorf("transport %q, session %q; want stdio and none", got.Transport, got.SessionID)
		}
		if got.ServerInfo.Name == "" || got.ProtocolVersion == "" || got.Instructions == "" {
			t.Errorf("serverInfo %+v, protocolVersion %q, instructions %q: want all set",
				got.ServerInfo, got.ProtocolVersion, got.Instructions)
		}
		names := got.toolNames()
		for _, want := range []string{"echo", "get-sum"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools %q lack %q", names, want)
			}
		}
		if len(got.Prompts) == 0 || len(got.Resources) == 0 || len(got.ResourceTemplates) == 0 {
			t.Errorf("%d prompts, %d resources, %d templates; want some of each",
				len(got.Prompts), len(got.Resources), len(got.ResourceTemplates))
		}
	})
	t.Run("call", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, append([]string{"call", "echo", "--args", `{"message":"hi"}`}, server...)...)
		r.mustSucceed(t)
		var got callResult
		decode(t, r.stdout, &got)
		if got.IsError || !strings.Contains(got.text(), "hi") {
			t.Errorf("result = %+v, want the echo of hi", got)
		}
	})
	t.Run("call/tool-flag", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, append([]string{"call", "--tool", "get-sum", "--args", `{"a":2,"b":3}`}, server...)...)
		r.mustSucceed(t)
		var got callResult
		decode(t, r.stdout, &got)
		if got.IsError || !strings.Contains(got.text(), "5") {
			t.Errorf("result = %+v, want the sum 5", got)
		}
	})
	t.Run("unknown-tool", func(t *testing.T) {
		t.Parallel()
		r := runCmd(t, append([]string{"call", "nope"}, server...)...)
		line := r.errorLine(t, exitFailure)
		if !strings.Contains(line, `tool "nope" not found on command "`) || !strings.Contains(line, "echo") {
			t.Errorf("stderr = %q", line)
		}
	})
}

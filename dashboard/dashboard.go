// Package dashboard holds the web dashboard of agentmcp serve, embedded:
// static assets only, no Go logic. Package server serves them.
//
// # Files
//
//   - index.html: the page, an html/template executed with
//     {DefaultAgent string; AllowStdioServers bool} (the "class/name" shown
//     when the URL names none with ?agent=class/name; whether the add form
//     offers stdio servers, a command: its fields are removed otherwise).
//   - callback.html: the page OAuth popups land on, an html/template
//     executed with agent.CallbackResult; static/callback.js closes the
//     popup after a success.
//   - static/agent.js: a JavaScript module with no build step exporting
//     connectAgent({agent, name, onMcpUpdate}), the seed's useAgent shape:
//     the agent's live MCP state over its WebSocket, and its JSON API. The
//     dashboard uses it; a React app can import it too.
//   - static/app.js: the dashboard itself: servers (in the order the state
//     gives them), the agent picker, tools, prompts and resources panels,
//     elicitations, and the banner while the stream to serve is down; it
//     wires the other modules' panels.
//   - static/stats.js: the servers' call figures (calls, error rate, p50
//     and p95 latency over the last minutes, from GET .../stats), asked
//     for every 5 seconds while the page is visible and live, and after a
//     call made from the page.
//   - static/tasks.js: the agent's tasks (tool calls its servers run as
//     MCP tasks, from GET .../tasks): tool, server, status and status
//     message, asked for every 2 seconds while the page is visible and
//     live; Cancel for a running one (POST .../tasks/{id}/cancel), Result
//     for a completed one (GET .../tasks/{id}). A tool call from the page
//     that became a task cancels its task when its Cancel is pressed.
//   - static/approvals.js: the approval queue: calls the agent's tool
//     policy asks a person about (GET .../approvals), asked for every 2
//     seconds while the page is visible and live (the agent pushes no
//     approvals to the state stream); pending ones with their server, tool,
//     caller, times and arguments (as JSON text), Approve, Approve and
//     remember, and Deny with a reason (POST .../approvals/{id}); answered
//     ones with their state and result.
//   - static/policy.js: the agent's tool policy (GET and PUT .../policy):
//     its default and rules, a JSON editor with the presets (GET
//     .../policy/presets/{name}) that shows a refused policy's error, and
//     each tool's effective action per caller in the tool list (GET
//     .../policy/tools), the tools denied to the API named under it.
//   - static/busy.js: the line under the header on what keeps the agent
//     awake (GET .../busy: calls and requests in flight, open streams,
//     pending elicitations, a keep-awake mark), or that it is idle or
//     asleep, asked for every 5 seconds and after each state change.
//   - static/toolsearch.js: the tool list's search box: the agent's tool
//     search (GET .../tools?q=) as the user types; the list then shows the
//     matches best first, each with its server and score, callable there.
//   - static/forms.js: forms generated from JSON schemas (defaults,
//     enumerations with titles, arrays, nested objects).
//   - static/content.js: MCP content as page nodes (text, images and audio
//     of known media types as data: URLs, resource links, embedded
//     resources).
//   - static/dom.js: small DOM helpers.
//   - static/style.css.
//
// The page loads nothing from another host and runs no inline script, so
// it works under the server's strict Content-Security-Policy; text from
// servers is only ever set with textContent.
package dashboard

import (
	"embed"
	"io/fs"
)

//go:embed index.html callback.html static
var files embed.FS

// Files returns the dashboard's files: index.html, callback.html and
// static/.
func Files() fs.FS { return files }

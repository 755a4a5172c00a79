package server

import (
	"context"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardTasks: a tool call that runs as a task, started from the
// dashboard's tool form, is listed in the Tasks section with its status
// and status message as they change; its Cancel button reaches the MCP
// server (tasks/cancel), and the row turns cancelled. A task started
// through the API that completes shows its result on Result.
func TestDashboardTasks(t *testing.T) {
	ctx, problems := browser(t)
	e, ts, _ := taskEnv(t, false, 0)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v (problems: %v)", what, err, problems())
		}
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Poll[any](expr)(ctx, t)
			return err
		})
	}
	tool := `details.tool[data-server-id="ts"][data-tool="work"]`
	do("starting a task from the page",
		chromedp.Navigate(e.ts.URL+"/?agent=test/a"),
		chromedp.WaitVisible(css(`#status[data-status="open"]`)),
		chromedp.WaitVisible(css(`#no-tasks`)),
		chromedp.Click(css(tool+" > summary")),
		chromedp.Click(css(tool+` form button[type="submit"]`)),
	)
	waitTask(t, ts, "the task", func() bool { return len(ts.Tasks()) == 1 })
	first := ts.Tasks()[0]
	row := `#tasks tr[data-task-id="ts:` + first + `"]`
	do("the task listed", chromedp.WaitVisible(css(row+`[data-status="working"]`)))
	ts.SetStatus(first, "step 2 of 5")
	do("its status message", chromedp.WaitVisible(css(row+` td.task-message`)), poll(`document.querySelector('`+row+` td.task-message').textContent === "step 2 of 5"`))
	do("cancelling it",
		chromedp.Click(css(row+` button.cancel-task`)),
		chromedp.WaitVisible(css(row+`[data-status="cancelled"][data-done="yes"]`)),
	)
	if got := ts.Cancelled(); !slices.Equal(got, []string{first}) {
		t.Fatalf("cancelled on the server: %v, want %s", got, first)
	}

	// One through the API, completed: its result on the page.
	status, _, b := e.do("POST", "/agents/test/a/servers/ts/tools/call", `{"name":"work","timeoutMs":100}`)
	if status != 202 {
		t.Fatalf("call: %d %s", status, b)
	}
	task := decodeTask(t, b)
	row = `#tasks tr[data-task-id="` + task.ID + `"]`
	do("the second task listed", chromedp.WaitVisible(css(row+`[data-status="working"]`)))
	ts.Finish(task.TaskID, "page result")
	do("its result",
		chromedp.WaitVisible(css(row+`[data-status="completed"] button.show-result`)),
		chromedp.Click(css(row+` button.show-result`)),
		chromedp.WaitVisible(css(`#tasks tr.task-result[data-task-id="`+task.ID+`"]`)),
		poll(`document.querySelector('#tasks tr.task-result pre').textContent.includes("page result")`),
	)
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}

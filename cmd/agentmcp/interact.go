package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/mcpclient/input"
)

// stdinKey is the context key of the command's standard input, which main
// sets (run's signature has no stdin; tests that want one set it too).
type stdinKey struct{}

// withStdin returns ctx carrying f as the command's standard input.
func withStdin(ctx context.Context, f *os.File) context.Context {
	return context.WithValue(ctx, stdinKey{}, f)
}

// stdinOf returns the standard input ctx carries, or nil.
func stdinOf(ctx context.Context) *os.File {
	f, _ := ctx.Value(stdinKey{}).(*os.File)
	return f
}

// terminal is the user's side of one tool call: it shows the server's
// progress notifications on stderr (a progress line on a terminal, JSON
// lines elsewhere) and answers elicitations in the terminal when stdin is
// one; when it is not, an elicitation fails the call at once.
type terminal struct {
	tool   string
	stderr io.Writer
	errTTY *os.File // stderr, when it is a terminal
	in     *os.File // stdin, when it is a terminal

	// serverName names the server in questions, when known.
	serverName string
	// cancel ends the call with a cause: the elicitation it cannot answer.
	cancel context.CancelCauseFunc
	// release ends the call's context, for close.
	release func()

	// outMu serialises writes to stderr; progressShown says a progress
	// line is on screen, prompting that one must not be drawn now.
	outMu         sync.Mutex
	progressShown bool
	prompting     bool
	taskID        string // the call's task, once it became one (tasks.go)

	// promptMu lets one elicitation at a time use the terminal.
	promptMu sync.Mutex

	// The reader of stdin, started at the first prompt.
	readOnce sync.Once
	lines    chan lineRead
	stop     chan struct{}
	readDone chan struct{}
}

type lineRead struct {
	line string
	err  error
}

// newTerminal returns the terminal of a call of tool; cancel ends the
// call.
func newTerminal(ctx context.Context, tool string, stderr io.Writer, cancel context.CancelCauseFunc) *terminal {
	t := &terminal{tool: tool, stderr: stderr, cancel: cancel, stop: make(chan struct{})}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		t.errTTY = f
	}
	if in := stdinOf(ctx); isTerminal(in) {
		t.in = in
	}
	return t
}

// callOptions returns the options of the call, reporting progress here.
func (t *terminal) callOptions() *mcpclient.CallOptions {
	return &mcpclient.CallOptions{Progress: t.progress}
}

// progress shows one progress notification. It runs on the connection's
// reading goroutine: it only writes a line.
func (t *terminal) progress(p *mcp.ProgressNotificationParams) {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	if t.errTTY == nil {
		line := struct {
			Type     string  `json:"type"`
			Tool     string  `json:"tool"`
			Progress float64 `json:"progress"`
			Total    float64 `json:"total,omitempty"`
			Message  string  `json:"message,omitempty"`
		}{"progress", t.tool, p.Progress, p.Total, oneLine(p.Message)}
		b, err := json.Marshal(line)
		if err == nil {
			t.stderr.Write(append(b, '\n'))
		}
		return
	}
	if t.prompting {
		return
	}
	text := fmt.Sprintf("%s: %s", t.tool, progressText(p))
	fmt.Fprintf(t.errTTY, "\r%s\033[K", oneLine(text))
	t.progressShown = true
}

// progressText is "40% (2/5) message", or "2 message" without a total.
func progressText(p *mcp.ProgressNotificationParams) string {
	num := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	s := num
	if p.Total > 0 {
		s = fmt.Sprintf("%.0f%% (%s/%s)", 100*p.Progress/p.Total, num, strconv.FormatFloat(p.Total, 'f', -1, 64))
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

// clearLineLocked removes the progress line, if one is shown.
func (t *terminal) clearLineLocked() {
	if t.progressShown {
		fmt.Fprint(t.errTTY, "\r\033[K")
		t.progressShown = false
	}
}

// clearProgress removes the progress line, so that what the call prints
// next (its result, on the same terminal) starts a line of its own.
func (t *terminal) clearProgress() {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	if t.errTTY != nil {
		t.clearLineLocked()
	}
}

// close clears the progress line and stops the reader of stdin. Call it
// once the call's context has ended, so that no prompt is waiting.
func (t *terminal) close() {
	if t.release != nil {
		t.release() // prompts of the call return
	}
	t.promptMu.Lock() // no prompt runs; readOnce is done or never will be
	defer t.promptMu.Unlock()
	t.outMu.Lock()
	if t.errTTY != nil {
		t.clearLineLocked()
	}
	t.outMu.Unlock()
	close(t.stop)
	if t.readDone != nil {
		// A terminal opened as a pollable file stops reading at once; the
		// process's own stdin may not (its reader then ends with the
		// process).
		if t.in.SetReadDeadline(time.Now()) == nil {
			<-t.readDone
		}
	}
}

// handlers returns the elicitation handlers of the call.
func (t *terminal) handlers() *input.ElicitationHandlers {
	// The URL handler returns once the user says the page is done: no
	// further wait for the server's completion notice.
	return &input.ElicitationHandlers{Form: t.form, URL: t.url, URLCompletionWait: -1}
}

// needsTerminalError is the failure of a call whose server asked for input
// while stdin is not a terminal.
type needsTerminalError struct {
	tool, mode, message string
}

func (e *needsTerminalError) Error() string {
	what := "to fill in a form"
	if e.mode == "url" {
		what = "to open a URL"
	}
	msg := ""
	if e.message != "" {
		msg = fmt.Sprintf(" (%q)", e.message)
	}
	return fmt.Sprintf("tool %q asks the user %s%s, and stdin is not a terminal: run agentmcp call in a terminal to answer it, or call the tool from the dashboard (agentmcp serve, then open %s/)",
		e.tool, what, msg, defaultServer)
}

// refuse fails the call at once: nobody can answer.
func (t *terminal) refuse(req *input.ElicitationRequest) (*mcp.ElicitResult, error) {
	err := &needsTerminalError{tool: t.tool, mode: req.Mode, message: oneLine(req.Message)}
	t.cancel(err)
	return nil, err
}

// startPrompt takes the terminal for one elicitation; the result gives it
// back.
func (t *terminal) startPrompt() (done func()) {
	t.promptMu.Lock()
	t.outMu.Lock()
	if t.errTTY != nil {
		t.clearLineLocked()
	}
	t.prompting = true
	t.outMu.Unlock()
	return func() {
		t.outMu.Lock()
		t.prompting = false
		t.outMu.Unlock()
		t.promptMu.Unlock()
	}
}

// say writes to stderr.
func (t *terminal) say(format string, args ...any) {
	t.outMu.Lock()
	fmt.Fprintf(t.stderr, format, args...)
	t.outMu.Unlock()
}

// readLine reads one line of stdin, without its end. Only a prompt (which
// holds promptMu) calls it.
func (t *terminal) readLine(ctx context.Context) (string, error) {
	t.readOnce.Do(func() {
		t.lines = make(chan lineRead)
		t.readDone = make(chan struct{})
		go t.read()
	})
	select {
	case r := <-t.lines:
		return r.line, r.err
	case <-ctx.Done():
		t.say("\n")
		return "", ctx.Err()
	}
}

func (t *terminal) read() {
	defer close(t.readDone)
	r := bufio.NewReader(t.in)
	for {
		line, err := r.ReadString('\n')
		if err != nil && line == "" {
			if err == io.EOF {
				err = errEOF
			}
			select {
			case t.lines <- lineRead{err: err}:
			case <-t.stop:
			}
			return
		}
		select {
		case t.lines <- lineRead{line: strings.TrimRight(line, "\r\n")}:
		case <-t.stop:
			return
		}
	}
}

// errEOF is the end of the terminal's input (Ctrl-D): the user cancels.
var errEOF = errors.New("end of input")

// choose asks for one of accept, decline and cancel; empty means def.
func (t *terminal) choose(ctx context.Context, prompt, def string) (string, error) {
	for {
		t.say("%s", prompt)
		line, err := t.readLine(ctx)
		if err != nil {
			return "", err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "":
			return def, nil
		case "a", "accept", "y", "yes":
			return "accept", nil
		case "d", "decline", "n", "no":
			return "decline", nil
		case "c", "cancel":
			return "cancel", nil
		}
		t.say("  answer a (accept), d (decline) or c (cancel)\n")
	}
}

// answerOf turns a read error into the user's answer: the end of input
// cancels.
func answerOf(err error) (*mcp.ElicitResult, error) {
	if errors.Is(err, errEOF) {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return nil, err
}

// form answers a form-mode elicitation in the terminal.
func (t *terminal) form(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
	if t.in == nil {
		return t.refuse(req)
	}
	done := t.startPrompt()
	defer done()
	fields, err := formFields(req.RequestedSchema)
	if err != nil {
		return nil, err
	}
	t.say("\nServer %s asks (tool %s): %s\n", oneLine(serverID), oneLine(t.tool), oneLine(req.Message))
	action, err := t.choose(ctx, "Answer? [a]ccept and fill in the form, [d]ecline, [c]ancel (default a): ", "accept")
	if err != nil {
		return answerOf(err)
	}
	if action != "accept" {
		return &mcp.ElicitResult{Action: action}, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		for {
			t.say("  %s: ", f.prompt())
			line, err := t.readLine(ctx)
			if err != nil {
				return answerOf(err)
			}
			v, ok, perr := f.parse(strings.TrimSpace(line))
			if perr != nil {
				t.say("    %v\n", perr)
				continue
			}
			if ok {
				content[f.name] = v
			}
			break
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// url answers a URL-mode elicitation: it shows the URL and waits for the
// user to say the page is done.
func (t *terminal) url(ctx context.Context, req *input.ElicitationRequest, serverID string) (*mcp.ElicitResult, error) {
	if t.in == nil {
		return t.refuse(req)
	}
	done := t.startPrompt()
	defer done()
	t.say("\nServer %s asks (tool %s): %s\nOpen this URL in your browser:\n  %s\n", oneLine(serverID), oneLine(t.tool), oneLine(req.Message), oneLine(req.URL))
	action, err := t.choose(ctx, "Press Enter once you are done there, or type d to decline, c to cancel: ", "accept")
	if err != nil {
		return answerOf(err)
	}
	return &mcp.ElicitResult{Action: action}, nil
}

// formField is one property of an elicitation form.
type formField struct {
	name, title, typ, description string
	required                      bool
	def                           any
	// options are the allowed values (an enum) and their titles.
	options []option
	multi   bool // an array of options
	// format is a string's format (email, uri, date, date-time), and
	// minLength, maxLength, minimum and maximum its bounds: what the
	// server will hold the answer to, checked here so that the user can
	// type it again rather than see the call fail.
	format               string
	minLength, maxLength *int
	minimum, maximum     *float64
}

type option struct {
	value any
	title string
}

// prompt describes the field: its title, type, options and default.
func (f *formField) prompt() string {
	var b strings.Builder
	b.WriteString(oneLine(cmpOr(f.title, f.name)))
	var parts []string
	switch {
	case len(f.options) > 0:
		names := make([]string, len(f.options))
		for i, o := range f.options {
			names[i] = fmt.Sprintf("%d) %s", i+1, oneLine(o.title))
		}
		kind := "one of"
		if f.multi {
			kind = "any of, separated by commas"
		}
		parts = append(parts, kind+": "+strings.Join(names, ", "))
	case f.format != "":
		parts = append(parts, f.typ+", "+f.format)
	default:
		parts = append(parts, f.typ)
	}
	if f.def != nil {
		parts = append(parts, "default "+oneLine(fmt.Sprint(f.def)))
	} else if f.required {
		parts = append(parts, "required")
	}
	fmt.Fprintf(&b, " (%s)", strings.Join(parts, "; "))
	if f.description != "" {
		b.WriteString(" - " + oneLine(f.description))
	}
	return b.String()
}

// parse turns what the user typed into the field's value; ok is false for
// a field left out (its default, if any, is filled in before the answer
// reaches the server).
func (f *formField) parse(s string) (v any, ok bool, err error) {
	if s == "" {
		if f.required && f.def == nil {
			return nil, false, errors.New("this field is required")
		}
		return nil, false, nil
	}
	if len(f.options) > 0 {
		if !f.multi {
			o, err := f.pick(s)
			return o, err == nil, err
		}
		var vals []any
		for _, part := range strings.Split(s, ",") {
			o, err := f.pick(strings.TrimSpace(part))
			if err != nil {
				return nil, false, err
			}
			vals = append(vals, o)
		}
		return vals, true, nil
	}
	switch f.typ {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false, errors.New("want a whole number")
		}
		return n, true, f.inRange(float64(n))
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false, errors.New("want a number")
		}
		return n, true, f.inRange(n)
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, true, nil
		case "n", "no", "false", "0":
			return false, true, nil
		}
		return nil, false, errors.New("want yes or no")
	}
	if err := f.checkString(s); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// inRange checks a number against the field's minimum and maximum.
func (f *formField) inRange(n float64) error {
	switch {
	case f.minimum != nil && n < *f.minimum:
		return fmt.Errorf("want at least %v", *f.minimum)
	case f.maximum != nil && n > *f.maximum:
		return fmt.Errorf("want at most %v", *f.maximum)
	}
	return nil
}

// checkString checks a string against the field's length and format.
func (f *formField) checkString(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case f.minLength != nil && n < *f.minLength:
		return fmt.Errorf("want at least %d characters", *f.minLength)
	case f.maxLength != nil && n > *f.maxLength:
		return fmt.Errorf("want at most %d characters", *f.maxLength)
	}
	switch f.format {
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("want a date as YYYY-MM-DD")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("want a date and time as 2006-01-02T15:04:05Z (RFC 3339)")
		}
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("want an email address (name@example.com)")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("want a URI with its scheme (https://...)")
		}
	}
	return nil
}

// pick finds an option by its number, value or title.
func (f *formField) pick(s string) (any, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.options) {
		return f.options[n-1].value, nil
	}
	for _, o := range f.options {
		if fmt.Sprint(o.value) == s || strings.EqualFold(o.title, s) {
			return o.value, nil
		}
	}
	return nil, fmt.Errorf("%q is not one of the options", s)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// formFields reads the properties of a form's schema, in their order.
func formFields(schema json.RawMessage) ([]formField, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if len(schema) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("reading the form's schema: %w", err)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, fmt.Errorf("reading the form's schema: %w", err)
	}
	var props map[string]propSchema
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("reading the form's schema: %w", err)
		}
	}
	fields := make([]formField, 0, len(names))
	for _, name := range names {
		p := props[name]
		f := formField{name: name, title: p.Title, typ: cmpOr(p.Type, "string"), description: p.Description, def: p.Default,
			format: p.Format, minLength: p.MinLength, maxLength: p.MaxLength, minimum: p.Minimum, maximum: p.Maximum}
		for _, r := range s.Required {
			f.required = f.required || r == name
		}
		f.options = p.options()
		if p.Type == "array" && p.Items != nil {
			f.options, f.multi = p.Items.options(), true
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// propSchema is what a form property may say (MCP's restricted schema).
type propSchema struct {
	Type        string        `json:"type"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Default     any           `json:"default"`
	Enum        []any         `json:"enum"`
	EnumNames   []string      `json:"enumNames"`
	OneOf       []titledConst `json:"oneOf"`
	AnyOf       []titledConst `json:"anyOf"`
	Items       *propSchema   `json:"items"`
	Format      string        `json:"format"`
	MinLength   *int          `json:"minLength"`
	MaxLength   *int          `json:"maxLength"`
	Minimum     *float64      `json:"minimum"`
	Maximum     *float64      `json:"maximum"`
}

type titledConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// options returns the allowed values with their titles: enum (with the
// legacy enumNames), or oneOf/anyOf of titled constants.
func (p *propSchema) options() []option {
	var opts []option
	for i, v := range p.Enum {
		title := fmt.Sprint(v)
		if i < len(p.EnumNames) && p.EnumNames[i] != "" {
			title = p.EnumNames[i]
		}
		opts = append(opts, option{value: v, title: title})
	}
	for _, c := range append(p.OneOf, p.AnyOf...) {
		if c.Const != nil {
			opts = append(opts, option{value: c.Const, title: cmpOr(c.Title, fmt.Sprint(c.Const))})
		}
	}
	return opts
}

// objectKeys returns the keys of a JSON object in the order they appear.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// startTerminal returns the context of a call of tool, which an
// elicitation nobody can answer ends, and the call's terminal. Close the
// terminal when the call is over.
func startTerminal(ctx context.Context, tool string, stderr io.Writer) (context.Context, *terminal) {
	callCtx, cancel := context.WithCancelCause(ctx)
	t := newTerminal(ctx, tool, stderr, cancel)
	t.release = func() { cancel(nil) }
	return callCtx, t
}

// refused returns the error of an elicitation that ended the call (stdin
// is not a terminal), or nil.
func (t *terminal) refused(callCtx context.Context) error {
	var nerr *needsTerminalError
	if errors.As(context.Cause(callCtx), &nerr) {
		return nerr
	}
	return nil
}

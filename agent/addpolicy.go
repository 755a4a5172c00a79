package agent

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/store"
)

// What an add does beyond the seed's behaviour, when asked (AddOptions):
// readable ids, a name that names one server, and a failed first
// connection that leaves nothing stored.

// ErrNotMCPEndpoint is wrapped by the error of a server whose URL answered
// as no MCP endpoint: HTTP 404, 405 or 501 to every transport tried
// (streamable HTTP, then the HTTP+SSE fallback). A mistyped path, most
// often.
var ErrNotMCPEndpoint = errors.New("not an MCP endpoint")

// ErrNotSaved is wrapped by the error of an add that removed its new
// server again (AddOptions.RemoveIfFailed): nothing stays stored.
var ErrNotSaved = errors.New("nothing was saved")

// notSavedError is a failed first connection whose server was removed
// again.
type notSavedError struct{ err error }

func (e *notSavedError) Error() string   { return e.err.Error() + "; nothing was saved" }
func (e *notSavedError) Unwrap() []error { return []error{ErrNotSaved, e.err} }

// NameInUseError is returned by AddMCPServer with AddOptions.UniqueName
// when another server (another URL or command) has the name.
type NameInUseError struct {
	Name string
	// ID and Target are the existing server's id and what it is (its URL,
	// without secrets, or its command).
	ID, Target string
}

func (e *NameInUseError) Error() string {
	return fmt.Sprintf("a server named %q already exists (id %s, %s)", e.Name, e.ID, e.Target)
}

// NotMCPEndpointError reports a URL that answered as no MCP endpoint. It
// wraps ErrNotMCPEndpoint, ErrNotSaved and the connection's error.
type NotMCPEndpointError struct {
	// Name is the server's name and URL its URL, without secrets.
	Name, URL string
	// Statuses are the HTTP statuses it answered.
	Statuses []int
	Err      error
}

func (e *NotMCPEndpointError) Error() string {
	var codes []string
	for _, code := range e.Statuses {
		s := strconv.Itoa(code) + " " + http.StatusText(code)
		if !slices.Contains(codes, s) {
			codes = append(codes, s)
		}
	}
	return fmt.Sprintf("%s is not an MCP endpoint: %s answered HTTP %s; check the URL's path (nothing was saved)", e.Name, e.URL, strings.Join(codes, ", "))
}

func (e *NotMCPEndpointError) Unwrap() []error {
	return []error{ErrNotMCPEndpoint, ErrNotSaved, e.Err}
}

// notMCPEndpoint returns the statuses of the HTTP errors in err when each
// is 404, 405 or 501 without a JSON-RPC error: the URL answered, and what
// answered is no MCP server. It returns nil otherwise.
func notMCPEndpoint(err error) []int {
	var statuses []int
	ok := true
	var walk func(error)
	walk = func(err error) {
		if err == nil || !ok {
			return
		}
		if h, is := err.(*mcpclient.HTTPError); is {
			switch h.StatusCode {
			case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
				if h.JSONRPC == nil {
					statuses = append(statuses, h.StatusCode)
					return
				}
			}
			ok = false
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	if !ok || errors.Is(err, mcpclient.ErrSessionExpired) {
		return nil
	}
	return statuses
}

// dropFailed reports whether a new server whose first connection failed
// with err goes again, by o: always with RemoveIfFailed, and only when it
// is no MCP endpoint with KeepIfUnreachable too. It returns the error to
// report (wrapping ErrNotSaved when the server goes).
func dropFailed(o AddOptions, row store.Server, err error) (bool, error) {
	if !o.RemoveIfFailed || err == nil {
		return false, err
	}
	if st := notMCPEndpoint(err); st != nil && row.Options.Command == nil {
		return true, &NotMCPEndpointError{Name: row.Name, URL: redact(row.URL), Statuses: st, Err: err}
	}
	if o.KeepIfUnreachable {
		return false, err
	}
	return true, &notSavedError{err}
}

// sameName returns the stored server named name that is not tgt, if
// there is one.
func (a *Agent) sameName(name string, tgt target) *store.Server {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, id := range a.order {
		if row := a.rows[id]; row.Name == name && !tgt.same(row) {
			return &row
		}
	}
	return nil
}

// nameID returns the id of a new server named name with IDFromName: the
// name normalised, with "-2", "-3", ... when another server has that id.
func (a *Agent) nameID(name string) string {
	base := NormalizeServerID(name)
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, taken := a.rows[base]; !taken {
		return base
	}
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		id := base
		if len(id)+len(suffix) > MaxServerIDLength {
			id = id[:MaxServerIDLength-len(suffix)]
		}
		id += suffix
		if _, taken := a.rows[id]; !taken {
			return id
		}
	}
}

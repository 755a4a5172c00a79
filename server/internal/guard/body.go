package guard

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/server/internal/reply"
)

// HasBody reports whether r comes with a body to read.
func HasBody(r *http.Request) bool { return r.Body != nil && r.Body != http.NoBody }

// Refuse answers a request that is refused before its body is read
// whole. The rest of the body is abandoned: the connection is closed after
// the answer, and its read deadline set to now, because net/http would
// otherwise read up to 256 KiB of what is left before closing (a client
// trickling it would hold the connection).
func Refuse(w http.ResponseWriter, r *http.Request, e *api.APIError) {
	abandonBody(w, r)
	reply.Error(w, e)
}

// abandonBody gives up r's body, if it has one: it is not read, and the
// connection is closed after the answer.
func abandonBody(w http.ResponseWriter, r *http.Request) {
	if HasBody(r) {
		w.Header().Set("Connection", "close")
		http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// ReadBody reads r's body, at most limit bytes, within timeout (zero: no
// bound), and gives it back to r in memory: the handlers never wait for a
// client's body, and a request that was refused never reaches them. The
// read deadline is lifted once the body is in, so that it cannot cut the
// handler's work (net/http lifts it too when it starts watching for the
// client going away). With limit 0 the body is not read: r answers as
// without one, and the connection is closed after the answer.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, timeout time.Duration) *api.APIError {
	if !HasBody(r) {
		return nil
	}
	if limit == 0 {
		// A route that takes no body answers as it would without one (a
		// wrong method still gets 405), and the body is never read.
		abandonBody(w, r)
		r.Body, r.ContentLength = http.NoBody, 0
		return nil
	}
	if r.ContentLength > limit {
		return reply.Errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", limit)
	}
	rc := http.NewResponseController(w)
	if timeout > 0 {
		rc.SetReadDeadline(time.Now().Add(timeout))
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if timeout > 0 {
		rc.SetReadDeadline(time.Time{})
	}
	var (
		tooLarge *http.MaxBytesError
		ne       net.Error
	)
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		return reply.Errorf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "the body is larger than %d bytes", limit)
	case errors.As(err, &ne) && ne.Timeout():
		return reply.Errorf(http.StatusRequestTimeout, api.CodeRequestTimeout, "the body did not arrive within %v", timeout)
	default:
		return reply.Errorf(http.StatusBadRequest, api.CodeInvalidRequest, "reading the body: the connection failed")
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	return nil
}

// deadlineWriter bounds the writing of a response: the connection's write
// deadline is set when the response starts, so that a handler that works
// for long before it answers (a tool call) is not cut, and a client that
// does not read its answer does not hold the handler forever.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) http.ResponseWriter {
	if timeout <= 0 {
		return w
	}
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (w *deadlineWriter) start() {
	if !w.started {
		w.started = true
		w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *deadlineWriter) WriteHeader(status int) {
	w.start()
	w.ResponseWriter.WriteHeader(status)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

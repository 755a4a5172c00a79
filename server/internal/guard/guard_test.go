package guard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// safety bounds a wait that should end far sooner.
const safety = 20 * time.Second

const agentPath = "/agents/test/a"

// apiRoute is how the server judges its API routes: protected, a JSON
// body on POST.
func apiRoute(pattern string, r *http.Request) Route {
	if pattern == "/static/" {
		return Route{Public: true}
	}
	return Route{Body: 1 << 20}
}

// TestLongRequestOutlivesBodyTimeout: once its body is in, a request may
// work for longer than BodyTimeout (a slow tool call): BodyTimeout bounds
// the body only, and neither cancels the request's context nor cuts its
// answer. The
// handler works until the test releases it, after another request, whose
// body stalls and which started after the first one's body was in, got its
// 408: BodyTimeout has then certainly passed for the first one too.
func TestLongRequestOutlivesBodyTimeout(t *testing.T) {
	t.Parallel()
	const limit = 50 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/agents/{class}/{name}/servers", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		close(started)
		select {
		case <-r.Context().Done():
			fmt.Fprintf(w, "cancelled: %v", context.Cause(r.Context()))
		case <-release:
			if err := r.Context().Err(); err != nil {
				fmt.Fprintf(w, "cancelled: %v", context.Cause(r.Context()))
				return
			}
			fmt.Fprintf(w, "done with %s", b)
		}
	})
	hs := &http.Server{Handler: New(&Options{BodyTimeout: limit}).Wrap(mux, apiRoute)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	defer hs.Close()

	done := make(chan string, 1)
	go func() {
		res, err := http.Post("http://"+l.Addr().String()+agentPath+"/servers", "application/json", strings.NewReader(`{"x":1}`))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		done <- string(b)
	}()
	<-started
	// Twice, one after the other: a request whose body never comes is
	// answered 408 once BodyTimeout has passed since it started.
	for range 2 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(safety))
		fmt.Fprintf(c, "POST %s/servers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n", agentPath)
		res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "POST"})
		if err != nil || res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("a request whose body stalls: %v %v", res, err)
		}
	}
	select {
	case got := <-done:
		t.Fatalf("the request ended while it worked: %s", got)
	default:
	}
	close(release)
	if got := <-done; got != `done with {"x":1}` {
		t.Errorf("answer %q", got)
	}
}

// TestUnreadResponseCut: a client that does not read its answer holds the
// request only for WriteTimeout once the answer has started; the handler's
// writes then fail and the connection is closed.
func TestUnreadResponseCut(t *testing.T) {
	t.Parallel()
	const limit = 100 * time.Millisecond
	writeErr := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/static/", func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 1024 { // 64 MiB: far more than the sockets buffer
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	})
	hs := &http.Server{Handler: New(&Options{WriteTimeout: limit}).Wrap(mux, apiRoute)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(l)
	defer hs.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /static/big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	select {
	case err := <-writeErr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the handler's writes ended with %v; want the write deadline", err)
		}
	case <-time.After(safety):
		t.Fatalf("the handler still writes to a client that does not read after %v", safety)
	}
}

package clustertest

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPidFinder: the server side of a loopback connection names the
// process that opened it (a child process of the test binary).
func TestPidFinder(t *testing.T) {
	if url := os.Getenv("CLUSTERTEST_HELPER_URL"); url != "" {
		t.Skip("helper") // run as a child by TestPidFinder, below
	}
	var childPid atomic.Int64
	f := &pidFinder{candidates: func() []int { return []int{os.Getpid(), int(childPid.Load())} }, inode: map[uint64]int{}}
	got := make(chan int, 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		got <- f.pidOf(r.RemoteAddr, local.String())
	})}
	go srv.Serve(l)
	defer srv.Close()
	child := exec.Command(os.Args[0], "-test.run=TestPidFinderHelper$")
	child.Env = append(os.Environ(), "CLUSTERTEST_HELPER_URL=http://"+l.Addr().String()+"/")
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	go1, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	childPid.Store(int64(child.Process.Pid))
	go1.Close() // the child sends its request once its stdin closes
	if err := child.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	if pid := <-got; pid != child.Process.Pid {
		t.Fatalf("pidOf = %d, want the child's %d (test %d)", pid, child.Process.Pid, os.Getpid())
	}
}

// TestSockDiagInode: the kernel's look-up by addresses finds the socket
// /proc/net/tcp lists, for the client end of a loopback connection.
func TestSockDiagInode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	accepted, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	client, server := conn.LocalAddr().(*net.TCPAddr), conn.RemoteAddr().(*net.TCPAddr)
	want := procNetInode(client.String(), server.String())
	if want == 0 {
		t.Fatal("no inode in /proc/net/tcp for the connection")
	}
	if got := sockDiagInode(client, server); got != want {
		t.Fatalf("sockDiagInode = %d, want %d (from /proc/net/tcp)", got, want)
	}
	if got := sockDiagInode(server, client); got == want || got == 0 {
		t.Fatalf("sockDiagInode of the server end = %d, want another socket's inode (client end %d)", got, want)
	}
}

// TestPidFinderHelper is the child of TestPidFinder: one request, with the
// connection held open until the answer came.
func TestPidFinderHelper(t *testing.T) {
	url := os.Getenv("CLUSTERTEST_HELPER_URL")
	if url == "" {
		t.Skip("run by TestPidFinder")
	}
	io.Copy(io.Discard, os.Stdin)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// TestDuplicates: overlapping activity of two processes on one server
// counts, a frozen process's held request does not while frozen (and for
// the grace after), a request it starts after the grace does.
func TestDuplicates(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	rec := &recorder{byKey: map[string][]*activity{
		"a/s0": {
			{pid: 1, start: at(0), end: at(1)},
			{pid: 2, start: at(1), end: at(2)}, // back to back: no overlap
		},
		"a/s1": {
			{pid: 1, start: at(0), end: at(10)}, // held across a freeze 2..5 (grace to 6)
			{pid: 2, start: at(3), end: at(5.5)},
		},
		"a/s2": {
			{pid: 1, start: at(0), end: at(10)},
			{pid: 2, start: at(7), end: at(8)}, // after the grace: overlaps
		},
		"a/s3": {
			{pid: 1, start: at(0), end: at(1)},
			{pid: 1, start: at(0.5), end: at(2)}, // one process: fine
			{pid: 3, start: at(5)},               // still open at the end
			{pid: 2, start: at(9), end: at(9.5)},
		},
		"a/s4": {
			{pid: 1, start: at(0), end: at(1.002), hungUp: true}, // its hang-up seen 2 ms late: a handover
			{pid: 2, start: at(1), end: at(2)},
		},
		"a/s5": {
			{pid: 1, start: at(0), end: at(1.002)}, // answered after the next one began: overlaps
			{pid: 2, start: at(1), end: at(2)},
		},
		"a/s6": {
			{pid: 1, start: at(0), end: at(1.5), hungUp: true}, // hung up long after: overlaps
			{pid: 2, start: at(1), end: at(2)},
		},
	}}
	n, ex := rec.duplicates([]frozen{{pid: 1, from: at(2), to: at(6)}}, at(20))
	if n != 4 || len(ex) != 4 {
		t.Fatalf("duplicates = %d %+v, want 4 (a/s2, a/s3, a/s5, a/s6)", n, ex)
	}
	for _, o := range ex {
		if o.key != "a/s2" && o.key != "a/s3" && o.key != "a/s5" && o.key != "a/s6" {
			t.Errorf("overlap on %s, want a/s2, a/s3, a/s5 or a/s6", o.key)
		}
	}
}

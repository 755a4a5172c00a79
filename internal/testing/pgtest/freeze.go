package pgtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// Freeze stops every process of the server with SIGSTOP (the postmaster
// and its children: backends, checkpointer, writers), as a server that
// hangs: connections stay open and nothing answers. The returned thaw
// resumes them with SIGCONT; it is idempotent, and also runs when t ends,
// so a failing test never leaves the server stopped. Freeze the server of
// one test only (pgtest.New in the test, stopped in its Cleanup): every
// database on it stops answering.
func (s *Server) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	if err := s.ready(); err != nil {
		t.Fatal(err)
	}
	pids, err := s.processes()
	if err != nil {
		t.Fatalf("pgtest: freeze: %v", err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			// Children the postmaster may have forked meanwhile are none
			// (it was stopped first), but look again to be sure.
			more, _ := s.processes()
			for _, pid := range append(pids, more...) {
				syscall.Kill(pid, syscall.SIGCONT)
			}
		})
	}
	t.Cleanup(thaw)
	for _, pid := range pids { // the postmaster first: it forks no more
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			thaw()
			t.Fatalf("pgtest: freeze: SIGSTOP %d: %v", pid, err)
		}
	}
	return thaw
}

// processes returns the postmaster's process id (from postmaster.pid),
// then those of its children.
func (s *Server) processes() ([]int, error) {
	b, err := os.ReadFile(s.path(filepath.Join("data", "postmaster.pid")))
	if err != nil {
		return nil, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pm, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pm <= 1 {
		return nil, fmt.Errorf("postmaster.pid: no process id in %q", line)
	}
	pids := []int{pm}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pm {
			continue
		}
		if ppid(pid) == pm {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids[1:])
	return pids, nil
}

// ppid returns the parent process id of pid, 0 if unknown.
func ppid(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	b, err := bufio.NewReader(f).ReadBytes('\n')
	if len(b) == 0 && err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(string(fields[1]))
	return n
}

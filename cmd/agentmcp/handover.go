package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/api/client"
)

// A serve on a SQLite database says where it listens in the file
// PATH.serve ({"pid": N, "url": "http://127.0.0.1:8787"}), next to the
// lock file that says whether it runs: agentmcp add --db and import --db
// on that database store their change, then ask that serve to take it in
// (POST .../reload), so that an awake agent has it at once.

// serveFile is the contents of PATH.serve.
type serveFile struct {
	PID int    `json:"pid"`
	URL string `json:"url"`
}

func serveFilePath(db string) string { return db + ".serve" }

// writeServeFile writes PATH.serve for this process, listening at base;
// the result removes it.
func writeServeFile(db, base string, logger *slog.Logger) (remove func()) {
	data, _ := json.Marshal(serveFile{PID: os.Getpid(), URL: base})
	path := serveFilePath(db)
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		logger.Warn("cannot say where serve listens, for agentmcp add --db", "error", err)
		return func() {}
	}
	return func() { os.Remove(path) }
}

// readServeFile reads PATH.serve of the SQLite database at db.
func readServeFile(db string) (serveFile, bool) {
	data, err := os.ReadFile(serveFilePath(db))
	var sf serveFile
	if err != nil || json.Unmarshal(data, &sf) != nil || sf.PID == 0 {
		return serveFile{}, false
	}
	return sf, true
}

// handOver tells the serve running on the SQLite database of tf, if the
// command ran beside one (tf.open found it holding the lock), that the
// agent's stored servers changed, so that it takes them in now (they are
// in the database either way). It says on w what happened, and when it
// could not, the exact command that does it.
func handOver(ctx context.Context, tf *targetFlags, w io.Writer) {
	if tf.db == "" || tf.beside == nil || !isServe(tf.beside) {
		return
	}
	pid, base := tf.beside.PID, ""
	if sf, ok := readServeFile(tf.db); ok && sf.PID == pid {
		base = sf.URL
	}
	class, name, _ := strings.Cut(tf.agent, "/")
	route := "/agents/" + class + "/" + name + "/reload"
	if base == "" {
		fmt.Fprintf(w, "agentmcp serve (pid %d) runs on %s: it sees the change when agent %s next wakes, or at once with: curl -X POST -H \"Authorization: Bearer $%s\" http://ADDRESS%s\n",
			pid, tf.db, tf.agent, envToken, route)
		return
	}
	c, err := client.New(client.AgentURL(base, class, name), &client.Options{Token: os.Getenv(envToken)})
	if err == nil {
		_, err = c.Reload(ctx)
	}
	if err != nil {
		auth := ""
		var aerr *api.APIError
		if errors.As(err, &aerr) && aerr.Code == api.CodeUnauthorized {
			auth = fmt.Sprintf("-H \"Authorization: Bearer $%s\" ", envToken)
		}
		fmt.Fprintf(w, "agentmcp serve (pid %d, %s) runs on %s and did not take the change in (%s): it sees it when agent %s next wakes, or at once with: curl -X POST %s%s%s\n",
			pid, base, tf.db, oneLine(err.Error()), tf.agent, auth, base, route)
		return
	}
	fmt.Fprintf(w, "agentmcp serve (pid %d, %s) took the change in\n", pid, base)
}

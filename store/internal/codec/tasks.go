package codec

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/agentmcp/agentmcp/store"
)

// taskRecord is what a task row stores as JSON besides its key.
type taskRecord struct {
	Tool            string          `json:"tool"`
	Protocol        string          `json:"protocol,omitempty"`
	ArgumentsHash   string          `json:"argumentsHash,omitempty"`
	Correlation     string          `json:"correlation,omitempty"`
	Status          string          `json:"status,omitempty"`
	StatusMessage   string          `json:"statusMessage,omitempty"`
	TTLMS           int64           `json:"ttlMs,omitempty"`
	PollIntervalMS  int64           `json:"pollIntervalMs,omitempty"`
	ServerCreatedAt time.Time       `json:"serverCreatedAt,omitzero"`
	Result          json.RawMessage `json:"result,omitempty"`
	Error           string          `json:"error,omitempty"`
	Done            bool            `json:"done,omitempty"`
}

var errNoTaskID = errors.New("empty task id")

// CheckTask checks a task's key.
func CheckTask(ns, serverID, taskID string) error {
	if err := CheckScope(ns, serverID); err != nil {
		return err
	}
	switch {
	case taskID == "":
		return errNoTaskID
	case !text(taskID):
		return errBadText
	}
	return nil
}

// EncodeTask returns the JSON record of t.
func EncodeTask(t store.Task) ([]byte, error) {
	return json.Marshal(taskRecord{
		Tool: t.Tool, Protocol: t.Protocol, ArgumentsHash: t.ArgumentsHash, Correlation: t.Correlation,
		Status: t.Status, StatusMessage: t.StatusMessage, TTLMS: t.TTLMS, PollIntervalMS: t.PollIntervalMS,
		ServerCreatedAt: t.ServerCreatedAt.UTC(), Result: t.Result, Error: t.Error, Done: t.Done,
	})
}

// DecodeTask fills t's fields from its JSON record.
func DecodeTask(data []byte, t *store.Task) error {
	var r taskRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	t.Tool, t.Protocol, t.ArgumentsHash, t.Correlation = r.Tool, r.Protocol, r.ArgumentsHash, r.Correlation
	t.Status, t.StatusMessage, t.TTLMS, t.PollIntervalMS = r.Status, r.StatusMessage, r.TTLMS, r.PollIntervalMS
	t.ServerCreatedAt, t.Result, t.Error, t.Done = r.ServerCreatedAt, r.Result, r.Error, r.Done
	return nil
}

package codec

import (
	"encoding/json"
	"errors"

	"github.com/agentmcp/agentmcp/store"
)

var errNoTool = errors.New("empty tool name")

// CheckPin checks a pin's key.
func CheckPin(ns, serverID, tool string) error {
	if err := CheckScope(ns, serverID); err != nil {
		return err
	}
	switch {
	case tool == "":
		return errNoTool
	case !text(tool):
		return errBadText
	}
	return nil
}

// EncodePin returns the JSON record of p.
func EncodePin(p store.Pin) ([]byte, error) { return json.Marshal(p) }

// DecodePin fills p from its JSON record; its key is the row's.
func DecodePin(data []byte, ns, serverID, tool string, p *store.Pin) error {
	if !decodePinRecord(data, p) { // pinread.go
		if err := json.Unmarshal(data, p); err != nil {
			return err
		}
	}
	p.Namespace, p.ServerID, p.Tool = ns, serverID, tool
	return nil
}

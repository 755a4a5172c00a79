package codec

import (
	"encoding/json"
	"errors"

	"github.com/agentmcp/agentmcp/store"
)

var errNoApprovalID = errors.New("empty approval id")

// CheckApproval checks an approval's key.
func CheckApproval(ns, id string) error {
	if err := CheckNamespace(ns); err != nil {
		return err
	}
	switch {
	case id == "":
		return errNoApprovalID
	case !text(id):
		return errBadText
	}
	return nil
}

// EncodeApproval returns the JSON record of a.
func EncodeApproval(a store.Approval) ([]byte, error) { return json.Marshal(a) }

// DecodeApproval fills a from its JSON record; its key and state are the
// row's.
func DecodeApproval(data []byte, ns, id, state string, a *store.Approval) error {
	if err := json.Unmarshal(data, a); err != nil {
		return err
	}
	a.Namespace, a.ID, a.State = ns, id, state
	return nil
}

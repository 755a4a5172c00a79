package agent

import (
	"context"
	"encoding/json"

	"github.com/agentmcp/agentmcp/store"
)

// fencedStore keeps store.PolicyStore and store.ApprovalStore visible
// through the wrapper, and fences their writes (an answer to an approval
// is made by the agent's owner only); a store without them gets the
// agent's "unsupported" errors.
var (
	_ store.PolicyStore   = (*fencedStore)(nil)
	_ store.ApprovalStore = (*fencedStore)(nil)
)

func (s *fencedStore) GetPolicy(ctx context.Context, ns string) (json.RawMessage, error) {
	ps, ok := s.Store.(store.PolicyStore)
	if !ok {
		return nil, nil
	}
	return ps.GetPolicy(ctx, ns)
}

func (s *fencedStore) PutPolicy(ctx context.Context, ns string, doc json.RawMessage) error {
	ps, ok := s.Store.(store.PolicyStore)
	if !ok {
		return ErrPolicyUnsupported
	}
	return s.check(ps.PutPolicy(s.ctx(ctx), ns, doc))
}

func (s *fencedStore) approvals() (store.ApprovalStore, error) {
	as, ok := s.Store.(store.ApprovalStore)
	if !ok {
		return nil, ErrApprovalsUnsupported
	}
	return as, nil
}

func (s *fencedStore) PutApproval(ctx context.Context, a store.Approval) error {
	as, err := s.approvals()
	if err != nil {
		return err
	}
	return s.check(as.PutApproval(s.ctx(ctx), a))
}

func (s *fencedStore) GetApproval(ctx context.Context, ns, id string) (store.Approval, error) {
	as, err := s.approvals()
	if err != nil {
		return store.Approval{}, err
	}
	return as.GetApproval(ctx, ns, id)
}

func (s *fencedStore) ListApprovals(ctx context.Context, ns string) ([]store.Approval, error) {
	as, err := s.approvals()
	if err != nil {
		return nil, err
	}
	return as.ListApprovals(ctx, ns)
}

func (s *fencedStore) SwapApproval(ctx context.Context, a store.Approval, from string) (bool, error) {
	as, err := s.approvals()
	if err != nil {
		return false, err
	}
	ok, err := as.SwapApproval(s.ctx(ctx), a, from)
	return ok, s.check(err)
}

func (s *fencedStore) DeleteApprovals(ctx context.Context, ns string, ids []string) (int, error) {
	as, err := s.approvals()
	if err != nil {
		return 0, err
	}
	n, err := as.DeleteApprovals(s.ctx(ctx), ns, ids)
	return n, s.check(err)
}

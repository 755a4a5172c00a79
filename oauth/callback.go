package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Errors of callback handling. The messages are safe to show to users.
var (
	ErrStateFormat  = errors.New("no server id found in the state parameter; expected {serverId}:{stateValue}")
	ErrStateUnknown = errors.New("state not found or already used")
	ErrStateExpired = errors.New("state expired")
	ErrStateServer  = errors.New("state belongs to another server")
	ErrIssuer       = errors.New("the authorization response comes from another issuer")
)

// ParseState splits a state parameter into its server id and value.
func ParseState(state string) (serverID, value string, err error) {
	i := strings.LastIndexByte(state, ':')
	if i <= 0 || i == len(state)-1 {
		return "", "", ErrStateFormat
	}
	return state[:i], state[i+1:], nil
}

// CheckState reports whether state can be redeemed for this server, without
// consuming it: it exists, it is this server's, and it is younger than
// StateLifetime.
func (p *Provider) CheckState(ctx context.Context, state string) error {
	_, err := p.flow(ctx, state)
	return err
}

func (p *Provider) flow(ctx context.Context, state string) (*flow, error) {
	return loadFlow(ctx, p.st, p.cfg.ServerID, state, p.now())
}

// CheckStoredState is Provider.CheckState without a Provider: it reports
// whether state can be redeemed for server serverID, whose provider keeps
// its data in st, at time now. It reads st only: no request, no
// registration, no other server's data, so it can be asked before anything
// of the server is opened (an OAuth callback, which carries no other
// credential, checked before its agent is woken).
func CheckStoredState(ctx context.Context, st Storage, serverID, state string, now time.Time) error {
	_, err := loadFlow(ctx, st, serverID, state, now)
	return err
}

// loadFlow returns the pending authorisation state names, if it is
// server serverID's and younger than StateLifetime at now.
func loadFlow(ctx context.Context, st Storage, serverID, state string, now time.Time) (*flow, error) {
	id, nonce, err := ParseState(state)
	if err != nil {
		return nil, err
	}
	if id != serverID {
		return nil, ErrStateServer
	}
	data, err := st.Get(ctx, keyStatePrefix+nonce)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrStateUnknown
	}
	if err != nil {
		return nil, err
	}
	var f flow
	if err := json.Unmarshal(data, &f); err != nil || f.ServerID != serverID {
		return nil, ErrStateUnknown
	}
	if now.Sub(f.CreatedAt) > StateLifetime {
		st.Delete(ctx, keyStatePrefix+nonce)
		return nil, ErrStateExpired
	}
	return &f, nil
}

// ConsumeState deletes a state, so that it cannot be redeemed.
func (p *Provider) ConsumeState(ctx context.Context, state string) error {
	if _, nonce, err := ParseState(state); err == nil {
		return p.st.Delete(ctx, keyStatePrefix+nonce)
	}
	return nil
}

// Exchange finishes an authorisation: it consumes the state (single use:
// of concurrent callbacks with one state, one wins), checks the issuer
// (RFC 9207), exchanges the code with the PKCE verifier bound to that
// state, and stores the tokens.
func (p *Provider) Exchange(ctx context.Context, callback url.Values) error {
	state := callback.Get("state")
	f, err := p.flow(ctx, state)
	if err != nil {
		return err
	}
	_, nonce, _ := ParseState(state)
	data, err := p.st.Take(ctx, keyStatePrefix+nonce)
	if err != nil {
		return ErrStateUnknown // someone else redeemed it first
	}
	if err := json.Unmarshal(data, f); err != nil {
		return ErrStateUnknown
	}
	// What the callback says goes into errors without these.
	secrets := []string{callback.Get("code"), f.Verifier, f.Client.Secret}
	iss := callback.Get("iss")
	switch {
	case iss != "" && iss != f.Issuer:
		return fmt.Errorf("%w (%q, expected %q)", ErrIssuer, redact(iss, secrets...), f.Issuer)
	case iss == "" && f.IssSupported:
		return fmt.Errorf("%w: the authorization server promised an iss parameter and sent none", ErrIssuer)
	}
	if e := callback.Get("error"); e != "" {
		msg := callback.Get("error_description")
		if msg == "" {
			msg = e
		}
		return fmt.Errorf("authorization failed: %s", redact(msg, secrets...))
	}
	code := callback.Get("code")
	if code == "" {
		return errors.New("no authorization code in the callback")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {f.Client.RedirectURI},
		"code_verifier": {f.Verifier},
		"resource":      {f.Resource},
	}
	tr, err := p.tokenRequest(ctx, f.Endpoint, f.Client, form)
	if err != nil {
		return fmt.Errorf("token exchange failed: %w", err)
	}
	t := p.tokenFrom(tr, f.Issuer, f.Endpoint, f.Resource, f.Client, f.Scopes)
	// Under the refresh lock: a refresh of the previous token that is in
	// flight must not overwrite or delete this one.
	if err := p.saveNew(ctx, t); err != nil {
		return err
	}
	if len(t.Scopes) > 0 {
		p.st.Put(ctx, keyScopes+f.Issuer, []byte(strings.Join(t.Scopes, " ")), time.Time{})
	}
	return nil
}

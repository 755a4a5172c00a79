package oauthtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Token endpoint authentication methods.
const (
	methodNone  = "none"
	methodPost  = "client_secret_post"
	methodBasic = "client_secret_basic"
)

// Client is an OAuth client the server knows.
type Client struct {
	// ID is the client_id. AddClient makes one up when it is empty.
	ID string
	// Secret is the client secret; empty for public clients.
	Secret string
	// AuthMethod is how the client authenticates at the token endpoint:
	// "none", "client_secret_post" or "client_secret_basic". Empty means
	// "client_secret_basic" when Secret is set, else "none".
	AuthMethod string
	// RedirectURIs are the redirect URIs the client may use, compared
	// exactly. A client without any cannot be authorized.
	RedirectURIs []string
	// GrantTypes are the client's grant types. Nil means
	// authorization_code and refresh_token for AddClient, authorization_code
	// for registrations that do not say (RFC 7591 §2).
	GrantTypes []string
	// Name is client_name; Scope is the registered scope string;
	// ApplicationType is "native", "web" or "".
	Name, Scope, ApplicationType string
	// MetadataDocument is true for a client known from its client ID
	// metadata document (its ID is the document's URL).
	MetadataDocument bool
}

func (c *Client) clone() Client {
	d := *c
	d.RedirectURIs = slices.Clone(c.RedirectURIs)
	d.GrantTypes = slices.Clone(c.GrantTypes)
	return d
}

// Registration is a request to the registration endpoint, as recorded.
type Registration struct {
	// Metadata is the request's JSON body, decoded; nil if it was not a
	// JSON object.
	Metadata map[string]any
	// ClientID is the client registered, or "" if the request failed.
	ClientID string
	// Status is the response's status; 0 for a dropped connection.
	Status int
	// Error and ErrorDescription are the OAuth error returned, if any.
	Error, ErrorDescription string
	// Fault is the fault injected, if any.
	Fault Fault
}

// Registrations returns every registration request received, in order.
func (s *AuthServer) Registrations() []Registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := make([]Registration, len(s.registrations))
	for i, r := range s.registrations {
		rs[i] = r
		rs[i].Metadata = cloneMap(r.Metadata)
	}
	return rs
}

// AddClient registers c, as a pre-registered client, and returns it with
// its defaults filled in. An existing client with the same ID is replaced.
func (s *AuthServer) AddClient(c Client) Client {
	s.t.Helper()
	c = c.clone()
	if c.ID == "" {
		c.ID = random("client-")
	}
	if c.AuthMethod == "" {
		c.AuthMethod = methodNone
		if c.Secret != "" {
			c.AuthMethod = methodBasic
		}
	}
	switch c.AuthMethod {
	case methodNone:
		if c.Secret != "" {
			s.t.Fatalf("oauthtest: AddClient(%s): a secret with auth method none", c.ID)
		}
	case methodPost, methodBasic:
		if c.Secret == "" {
			s.t.Fatalf("oauthtest: AddClient(%s): auth method %s without a secret", c.ID, c.AuthMethod)
		}
	default:
		s.t.Fatalf("oauthtest: AddClient(%s): unsupported auth method %q", c.ID, c.AuthMethod)
	}
	if c.GrantTypes == nil {
		c.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	s.mu.Lock()
	s.clients[c.ID] = &c
	s.mu.Unlock()
	return c.clone()
}

// RemoveClient forgets a client, as a server that lost or expired its
// registration: its authorization and token requests fail from then on
// (its tokens stay valid until they expire or are revoked).
func (s *AuthServer) RemoveClient(id string) {
	s.mu.Lock()
	delete(s.clients, id)
	s.mu.Unlock()
}

// registrationRequest is what the fake reads from RFC 7591 client metadata.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
	ApplicationType         string   `json:"application_type"`
}

// serveRegister is the RFC 7591 registration endpoint.
func (s *AuthServer) serveRegister(w http.ResponseWriter, r *http.Request) {
	s.Counts.Registrations.Add(1)
	var rec Registration
	defer func() {
		s.mu.Lock()
		s.registrations = append(s.registrations, rec)
		s.mu.Unlock()
	}()
	fail := func(status int, e *Error) {
		s.logf("register: %v", e)
		rec.Status, rec.Error, rec.ErrorDescription = status, e.Code, e.Description
		writeJSON(w, status, map[string]string{"error": e.Code, "error_description": e.Description})
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		fail(http.StatusBadRequest, oauthErr("invalid_client_metadata", "reading the body: %v", err))
		return
	}
	json.Unmarshal(body, &rec.Metadata)
	s.mu.Lock()
	var fault Fault
	if len(s.regFaults) > 0 {
		fault, s.regFaults = s.regFaults[0], s.regFaults[1:]
	}
	s.mu.Unlock()
	rec.Fault = fault
	if fault != FaultNone && fault != FaultLoseResponse {
		rec.Status = fault.write(w)
		if rec.Status != 0 {
			rec.Error = fault.code()
		}
		return
	}

	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		fail(http.StatusBadRequest, oauthErr("invalid_client_metadata", "content type %q, want application/json", mt))
		return
	}
	var req registrationRequest
	if err := json.Unmarshal(body, &req); err != nil || rec.Metadata == nil {
		fail(http.StatusBadRequest, oauthErr("invalid_client_metadata", "the body is not a JSON object of client metadata: %v", err))
		return
	}
	c, e := s.checkRegistration(&req)
	if e != nil {
		fail(http.StatusBadRequest, e)
		return
	}
	s.mu.Lock()
	s.clients[c.ID] = c
	s.mu.Unlock()
	rec.ClientID = c.ID

	resp := map[string]any{}
	for k, v := range rec.Metadata {
		resp[k] = v // RFC 7591 §3.2.1: the metadata registered, echoed
	}
	resp["client_id"] = c.ID
	resp["client_id_issued_at"] = s.now().Unix()
	resp["redirect_uris"] = c.RedirectURIs
	resp["grant_types"] = c.GrantTypes
	resp["response_types"] = []string{"code"}
	resp["token_endpoint_auth_method"] = c.AuthMethod
	if s.opts.OmitRegisteredAuthMethod {
		delete(resp, "token_endpoint_auth_method")
	}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
		resp["client_secret_expires_at"] = 0
	}
	if fault == FaultLoseResponse {
		dropConnection(w)
		return
	}
	rec.Status = http.StatusCreated
	writeJSON(w, http.StatusCreated, resp)
}

// checkRegistration validates client metadata and returns the client to
// register.
func (s *AuthServer) checkRegistration(req *registrationRequest) (*Client, *Error) {
	if len(req.RedirectURIs) == 0 {
		return nil, oauthErr("invalid_redirect_uri", "redirect_uris is required")
	}
	for _, u := range req.RedirectURIs {
		if err := s.checkRedirectURI(u); err != nil {
			return nil, oauthErr("invalid_redirect_uri", "redirect URI %q: %v", u, err)
		}
	}
	method := req.TokenEndpointAuthMethod
	if method == "" {
		method = methodBasic // RFC 7591 §2
	}
	if !slices.Contains(s.authMethod, method) {
		return nil, oauthErr("invalid_client_metadata", "token_endpoint_auth_method %q is not supported (supported: %s)", method, strings.Join(s.authMethod, ", "))
	}
	grants := req.GrantTypes
	if grants == nil {
		grants = []string{"authorization_code"}
	}
	for _, g := range grants {
		if g != "authorization_code" && g != "refresh_token" {
			return nil, oauthErr("invalid_client_metadata", "grant type %q is not supported", g)
		}
	}
	if !slices.Contains(grants, "authorization_code") {
		return nil, oauthErr("invalid_client_metadata", "grant_types lacks authorization_code")
	}
	if req.ResponseTypes != nil && !slices.Equal(req.ResponseTypes, []string{"code"}) {
		return nil, oauthErr("invalid_client_metadata", "response_types %q, want [code]", req.ResponseTypes)
	}
	switch req.ApplicationType {
	case "native", "web":
	case "":
		if s.opts.RequireApplicationType {
			return nil, oauthErr("invalid_client_metadata", "application_type is required")
		}
	default:
		return nil, oauthErr("invalid_client_metadata", "application_type %q, want native or web", req.ApplicationType)
	}
	c := &Client{
		ID:              random("client-"),
		AuthMethod:      method,
		RedirectURIs:    slices.Clone(req.RedirectURIs),
		GrantTypes:      slices.Clone(grants),
		Name:            req.ClientName,
		Scope:           req.Scope,
		ApplicationType: req.ApplicationType,
	}
	if method != methodNone {
		c.Secret = random("secret-")
	}
	return c, nil
}

// checkRedirectURI accepts absolute http(s) URIs without a fragment, http
// only on loopback hosts unless AllowHTTPRedirects.
func (s *AuthServer) checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch {
	case !u.IsAbs() || u.Host == "":
		return fmt.Errorf("not an absolute URL")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("has a fragment")
	case u.User != nil:
		return fmt.Errorf("has user information")
	case u.Scheme == "https":
		return nil
	case u.Scheme != "http":
		return fmt.Errorf("scheme %q, want http or https", u.Scheme)
	case s.opts.AllowHTTPRedirects || isLoopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("http on a host that is not loopback")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// clientForAuthorization finds a client for the authorization endpoint:
// a known one, or one described by its metadata document.
func (s *AuthServer) clientForAuthorization(r *http.Request, id string) (*Client, *Error) {
	s.mu.Lock()
	c, ok := s.clients[id]
	s.mu.Unlock()
	if s.opts.ClientMetadataDocuments && isMetadataDocumentURL(id) {
		return s.fetchMetadataDocument(r, id)
	}
	if !ok {
		return nil, oauthErr("invalid_request", "unknown client_id %q", id)
	}
	cc := c.clone()
	return &cc, nil
}

// isMetadataDocumentURL reports whether a client_id is a client ID
// metadata document URL: https, with a path.
func isMetadataDocumentURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/" && u.Fragment == ""
}

// fetchMetadataDocument fetches and checks a client ID metadata document,
// and remembers the client it describes, for the token endpoint.
func (s *AuthServer) fetchMetadataDocument(r *http.Request, id string) (*Client, *Error) {
	s.Counts.MetadataDocuments.Add(1)
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, id, nil)
	if err != nil {
		return nil, oauthErr("invalid_client", "client metadata document: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cimd.Do(req)
	if err != nil {
		return nil, oauthErr("invalid_client", "fetching the client metadata document: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, oauthErr("invalid_client", "client metadata document: %s", resp.Status)
	}
	var doc struct {
		ClientID string `json:"client_id"`
		registrationRequest
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&doc); err != nil {
		return nil, oauthErr("invalid_client", "client metadata document: %v", err)
	}
	if doc.ClientID != id {
		return nil, oauthErr("invalid_client", "client metadata document's client_id %q differs from its URL %q", doc.ClientID, id)
	}
	if doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != methodNone {
		return nil, oauthErr("invalid_client", "client metadata document: token_endpoint_auth_method %q is not supported here", doc.TokenEndpointAuthMethod)
	}
	if len(doc.RedirectURIs) == 0 {
		return nil, oauthErr("invalid_client", "client metadata document has no redirect_uris")
	}
	for _, u := range doc.RedirectURIs {
		if err := s.checkRedirectURI(u); err != nil {
			return nil, oauthErr("invalid_client", "client metadata document: redirect URI %q: %v", u, err)
		}
	}
	grants := doc.GrantTypes
	if grants == nil {
		grants = []string{"authorization_code"}
	}
	c := &Client{
		ID:               id,
		AuthMethod:       methodNone,
		RedirectURIs:     slices.Clone(doc.RedirectURIs),
		GrantTypes:       slices.Clone(grants),
		Name:             doc.ClientName,
		Scope:            doc.Scope,
		ApplicationType:  doc.ApplicationType,
		MetadataDocument: true,
	}
	s.mu.Lock()
	s.clients[id] = c
	s.mu.Unlock()
	cc := c.clone()
	return &cc, nil
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	// A JSON round trip copies nested values too.
	b, _ := json.Marshal(m)
	var c map[string]any
	json.Unmarshal(b, &c)
	return c
}

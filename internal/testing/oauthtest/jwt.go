package oauthtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"time"
)

// jwtSigner signs access tokens as JWTs (RFC 9068) with one key, published
// at the server's jwks_uri.
type jwtSigner struct {
	alg string // "RS256" or "ES256"
	kid string
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newJWTSigner(alg string) (*jwtSigner, error) {
	j := &jwtSigner{alg: alg, kid: random("k-")[:14]}
	var err error
	switch alg {
	case "RS256":
		j.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		j.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, &Error{Code: "unsupported", Description: "JWT algorithm " + alg + ": want RS256 or ES256"}
	}
	return j, err
}

// jwk is the public key as a JSON Web Key (RFC 7517).
func (j *jwtSigner) jwk() map[string]any {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	if j.rsa != nil {
		return map[string]any{"kty": "RSA", "kid": j.kid, "use": "sig", "alg": j.alg,
			"n": b64(j.rsa.N.Bytes()), "e": b64(big.NewInt(int64(j.rsa.E)).Bytes())}
	}
	pad := func(n *big.Int) []byte { return n.FillBytes(make([]byte, 32)) }
	return map[string]any{"kty": "EC", "kid": j.kid, "use": "sig", "alg": j.alg, "crv": "P-256",
		"x": b64(pad(j.ec.X)), "y": b64(pad(j.ec.Y))}
}

// sign returns the compact JWS of claims.
func (j *jwtSigner) sign(claims map[string]any) string {
	header, _ := json.Marshal(map[string]string{"alg": j.alg, "typ": "at+jwt", "kid": j.kid})
	payload, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	if j.rsa != nil {
		sig, _ = rsa.SignPKCS1v15(rand.Reader, j.rsa, crypto.SHA256, sum[:])
	} else {
		r, s, _ := ecdsa.Sign(rand.Reader, j.ec, sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// JWKSURI is where the server publishes its signing key (Options.JWT), or
// "" without JWT access tokens.
func (s *AuthServer) JWKSURI() string {
	if s.jwt == nil {
		return ""
	}
	return s.URL + s.prefix + "/jwks"
}

// serveJWKS publishes the signing key.
func (s *AuthServer) serveJWKS(w http.ResponseWriter) {
	keys := []any{}
	if s.jwt != nil {
		keys = append(keys, s.jwt.jwk())
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
}

// accessJWT returns the claims of an access token (RFC 9068) issued now.
func (s *AuthServer) accessClaims(clientID, resource string, scopes []string, expires time.Time) map[string]any {
	now := s.now()
	claims := map[string]any{
		"iss":       s.issuer,
		"sub":       "user-of-" + clientID,
		"client_id": clientID,
		"iat":       now.Unix(),
		"exp":       expires.Unix(),
		"jti":       random("jti-"),
	}
	if resource != "" {
		claims["aud"] = resource
	}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	return claims
}

// SignJWT signs claims with the server's key as an access token would be
// (header typ at+jwt), for tests of resource servers that must refuse some
// tokens: another audience, expired, another issuer. The token is not
// recorded (Lookup does not know it). It needs Options.JWT.
func (s *AuthServer) SignJWT(claims map[string]any) string {
	s.t.Helper()
	if s.jwt == nil {
		s.t.Fatal("oauthtest: SignJWT needs Options.JWT")
	}
	return s.jwt.sign(claims)
}

// AccessJWTClaims returns the claims an access token for clientID,
// resource and scopes issued now would have (issuer, subject, audience,
// scope, iat, exp after Options.AccessTokenTTL), to change one and sign
// with SignJWT.
func (s *AuthServer) AccessJWTClaims(clientID, resource string, scopes ...string) map[string]any {
	return s.accessClaims(clientID, resource, scopes, s.now().Add(s.opts.AccessTokenTTL))
}

package resource

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJWKSECKeys: the verifier takes a JWKS's P-256 keys whose
// point is on the curve, a coordinate shorter than 32 bytes included (its
// leading zeros left out), and refuses a point off the curve and a
// coordinate longer than the curve's, without failing the others.
func TestJWKSECKeys(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	coords := func(k *ecdsa.PublicKey) (x, y []byte) {
		b, err := k.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b[1:33], b[33:]
	}
	good, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	gx, gy := coords(&good.PublicKey)
	// A key whose X starts with a zero byte, written without it.
	var short []byte
	var sy []byte
	for short == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if x, y := coords(&k.PublicKey); x[0] == 0 {
			short, sy = x[1:], y
		}
	}
	offCurve := slices.Clone(gy)
	offCurve[31] ^= 1
	long := append([]byte{1}, gx...)
	type jwk struct {
		Kty string `json:"kty"`
		Kid string `json:"kid"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}
	keys := []jwk{
		{"EC", "good", "P-256", enc(gx), enc(gy)},
		{"EC", "short", "P-256", enc(short), enc(sy)},
		{"EC", "off-curve", "P-256", enc(gx), enc(offCurve)},
		{"EC", "long", "P-256", enc(long), enc(gy)},
	}
	var hs *httptest.Server
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{
				"issuer": hs.URL, "jwks_uri": hs.URL + "/jwks",
				"authorization_endpoint": hs.URL + "/authorize", "token_endpoint": hs.URL + "/token",
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			})
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		default:
			http.NotFound(w, r)
		}
	}))
	defer hs.Close()
	v := New(&Options{Issuer: hs.URL, HTTPClient: hs.Client()})
	got, err := v.fetchKeys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for kid := range got {
		kids = append(kids, kid)
	}
	slices.Sort(kids)
	if diff := cmp.Diff([]string{"good", "short"}, kids); diff != "" {
		t.Errorf("keys taken (-want +got):\n%s", diff)
	}
	if k, ok := got["good"].(*ecdsa.PublicKey); !ok || !k.Equal(&good.PublicKey) {
		t.Errorf("the good key is %v", got["good"])
	}
}

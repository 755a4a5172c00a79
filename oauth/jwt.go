package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"time"
)

// clientAssertion signs the JWT that authenticates a client with
// private_key_jwt (RFC 7523 section 2.2): issued by and about the client,
// for the authorization server, valid for five minutes, used once.
func clientAssertion(key crypto.Signer, clientID, audience string, now time.Time) (string, error) {
	var alg string
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize != 256 {
			return "", errors.New("only P-256 ECDSA keys are supported (ES256)")
		}
		alg = "ES256"
	case *rsa.PublicKey:
		alg = "RS256"
	default:
		return "", errors.New("unsupported key type; want ECDSA P-256 or RSA")
	}
	header, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": rand.Text(),
	})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return "", err
	}
	if alg == "ES256" {
		// crypto.Signer returns ASN.1 for ECDSA; JWS wants R || S.
		var parsed struct{ R, S *big.Int }
		if sig, err = ecdsaRS(sig, &parsed); err != nil {
			return "", err
		}
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// ecdsaRS converts an ASN.1 ECDSA signature to the 64-byte R || S form.
func ecdsaRS(der []byte, out *struct{ R, S *big.Int }) ([]byte, error) {
	if _, err := asn1.Unmarshal(der, out); err != nil {
		return nil, err
	}
	sig := make([]byte, 64)
	out.R.FillBytes(sig[:32])
	out.S.FillBytes(sig[32:])
	return sig, nil
}

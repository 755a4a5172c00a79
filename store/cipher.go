package store

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// EnvSecretKey is the environment variable CipherFromEnv reads.
const EnvSecretKey = "AGENTMCP_SECRET_KEY"

// KeySize is the size of an AES-256 key in bytes.
const KeySize = 32

// MinPassphraseLen is the shortest passphrase CipherFromPassphrase accepts.
const MinPassphraseLen = 16

// Prefixes of stored values. Every value a Cipher (or a nil *Cipher) seals
// starts with one of them, so plaintext and ciphertext can be told apart
// and the format can change later under a new prefix.
const (
	plainPrefix = "plain:"   // followed by the plaintext
	gcmPrefix   = "aesgcm1:" // followed by a 12-byte nonce and the AES-256-GCM ciphertext with its tag
)

// Parameters of the passphrase key derivation. They are part of the stored
// format: changing them makes every existing value unreadable.
const (
	pbkdf2Iterations = 600_000
	pbkdf2Salt       = "agentmcp/store/v1"
)

// A Cipher encrypts values at rest with AES-256-GCM, a random 12-byte nonce
// per value and caller-supplied additional data that binds a value to where
// it is stored. A Cipher is immutable and safe for concurrent use.
//
// A nil *Cipher is valid and means "no encryption": Seal marks the plaintext
// with a prefix and Open reads such values back, but fails with ErrDecrypt
// on encrypted ones. A Cipher with a key still reads plaintext values, so
// rows written before a key was configured stay readable (they are
// encrypted when next written).
type Cipher struct {
	aead cipher.AEAD
}

// NewCipher returns a Cipher that uses key, which must be KeySize (32)
// random bytes, as the AES-256 key, without derivation. Use
// CipherFromPassphrase for anything else.
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("store: cipher key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("store: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("store: cipher: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// CipherFromPassphrase derives the AES-256 key from passphrase with
// PBKDF2-HMAC-SHA256 (600,000 iterations, a fixed application salt) and
// returns its Cipher. Derivation takes a noticeable fraction of a second,
// on purpose: it slows down guessing the passphrase from a stolen database.
// The passphrase must be at least MinPassphraseLen bytes; a random 32-byte
// key (NewCipher) is still better.
func CipherFromPassphrase(passphrase string) (*Cipher, error) {
	if len(passphrase) < MinPassphraseLen {
		return nil, fmt.Errorf("store: passphrase is %d bytes, want at least %d", len(passphrase), MinPassphraseLen)
	}
	key, err := pbkdf2.Key(sha256.New, passphrase, []byte(pbkdf2Salt), pbkdf2Iterations, KeySize)
	if err != nil {
		return nil, fmt.Errorf("store: derive key: %w", err)
	}
	return NewCipher(key)
}

// CipherFromEnv returns the Cipher configured by the environment variable
// AGENTMCP_SECRET_KEY, or nil and no error when it is unset or empty.
// Surrounding white space is ignored. The value is read as, in this order:
//
//   - 64 hexadecimal digits: a 32-byte key, used as is;
//   - base64 (standard or URL alphabet, padded or not) of exactly 32 bytes:
//     a 32-byte key, used as is (for example `openssl rand -base64 32`);
//   - anything else: a passphrase for CipherFromPassphrase (at least 16
//     bytes).
func CipherFromEnv() (*Cipher, error) {
	v := strings.TrimSpace(os.Getenv(EnvSecretKey))
	if v == "" {
		return nil, nil
	}
	c, err := parseSecretKey(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvSecretKey, err)
	}
	return c, nil
}

// parseSecretKey implements CipherFromEnv's reading of v.
func parseSecretKey(v string) (*Cipher, error) {
	if key, ok := decodeKey(v); ok {
		return NewCipher(key)
	}
	return CipherFromPassphrase(v)
}

// decodeKey returns the 32-byte key spelled by v in hex or base64.
func decodeKey(v string) ([]byte, bool) {
	if len(v) == 2*KeySize {
		if key, err := hex.DecodeString(v); err == nil {
			return key, true
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(v); err == nil && len(key) == KeySize {
			return key, true
		}
	}
	return nil, false
}

// Seal returns plaintext in its stored form: encrypted, with additionalData
// authenticated (but not stored), when c has a key; marked as plaintext
// when c is nil. Open must be given the same additionalData.
func (c *Cipher) Seal(plaintext, additionalData []byte) []byte {
	if c == nil {
		out := make([]byte, 0, len(plainPrefix)+len(plaintext))
		return append(append(out, plainPrefix...), plaintext...)
	}
	ns := c.aead.NonceSize()
	out := make([]byte, len(gcmPrefix)+ns, len(gcmPrefix)+ns+len(plaintext)+c.aead.Overhead())
	copy(out, gcmPrefix)
	nonce := out[len(gcmPrefix):]
	rand.Read(nonce) // never fails (crypto/rand since Go 1.24)
	return c.aead.Seal(out, nonce, plaintext, additionalData)
}

// Open returns the plaintext of a value produced by Seal. It fails with an
// error wrapping ErrDecrypt when the value is encrypted and c is nil or has
// another key, when additionalData differs from Seal's, and when stored is
// not a sealed value at all.
func (c *Cipher) Open(stored, additionalData []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(stored, []byte(plainPrefix)):
		return bytes.Clone(stored[len(plainPrefix):]), nil
	case bytes.HasPrefix(stored, []byte(gcmPrefix)):
		if c == nil {
			return nil, fmt.Errorf("%w: value is encrypted and no key is configured", ErrDecrypt)
		}
		body := stored[len(gcmPrefix):]
		ns := c.aead.NonceSize()
		if len(body) < ns+c.aead.Overhead() {
			return nil, fmt.Errorf("%w: encrypted value is truncated", ErrDecrypt)
		}
		plain, err := c.aead.Open(nil, body[:ns], body[ns:], additionalData)
		if err != nil {
			return nil, fmt.Errorf("%w: authentication failed", ErrDecrypt)
		}
		if plain == nil {
			plain = []byte{}
		}
		return plain, nil
	default:
		return nil, fmt.Errorf("%w: unknown format", ErrDecrypt)
	}
}

// IsEncrypted reports whether stored is a value Seal encrypted (rather than
// marked as plaintext).
func IsEncrypted(stored []byte) bool {
	return bytes.HasPrefix(stored, []byte(gcmPrefix))
}

package store_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/agentmcp/agentmcp/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newCipher(t testing.TB, fill byte) *store.Cipher {
	t.Helper()
	c, err := store.NewCipher(bytes.Repeat([]byte{fill}, store.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCipherRoundTrip(t *testing.T) {
	c := newCipher(t, 1)
	ad := []byte("agentmcp/kv\x00chat/alice\x00token")
	for _, plain := range [][]byte{nil, {}, []byte("x"), []byte(`{"access_token":"secret"}`), bytes.Repeat([]byte{0, 255}, 5000)} {
		sealed := c.Seal(plain, ad)
		if !store.IsEncrypted(sealed) {
			t.Fatalf("Seal(%.20q) = %.40q, not encrypted", plain, sealed)
		}
		// (A short plaintext turns up in random bytes by chance: "x" in
		// about one sealing out of ten.)
		if len(plain) >= 8 && bytes.Contains(sealed, plain) {
			t.Fatalf("Seal(%.20q) contains the plaintext", plain)
		}
		got, err := c.Open(sealed, ad)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, plain) || got == nil {
			t.Fatalf("Open = %#v, want %#v (non-nil)", got, plain)
		}
	}
	// A fresh nonce each time: the same plaintext never seals alike.
	if a, b := c.Seal([]byte("same"), ad), c.Seal([]byte("same"), ad); bytes.Equal(a, b) {
		t.Fatal("two Seals of the same plaintext are equal")
	}
}

func TestCipherRejects(t *testing.T) {
	c := newCipher(t, 1)
	ad := []byte("ad")
	sealed := c.Seal([]byte("secret"), ad)
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for _, tt := range []struct {
		name   string
		c      *store.Cipher
		stored []byte
		ad     []byte
	}{
		{"no key", nil, sealed, ad},
		{"other key", newCipher(t, 2), sealed, ad},
		{"other additional data", c, sealed, []byte("other")},
		{"tampered", c, flipped, ad},
		{"truncated", c, sealed[:len("aesgcm1:")+5], ad},
		{"unknown format", c, []byte(`{"a":1}`), ad},
		{"empty", c, nil, ad},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.Open(tt.stored, tt.ad)
			if !errors.Is(err, store.ErrDecrypt) || got != nil {
				t.Fatalf("Open = %q, %v; want nil, ErrDecrypt", got, err)
			}
		})
	}
}

// TestNilCipher checks the plaintext form: readable with and without a key.
func TestNilCipher(t *testing.T) {
	var none *store.Cipher
	sealed := none.Seal([]byte("hello"), []byte("ad"))
	if string(sealed) != "plain:hello" || store.IsEncrypted(sealed) {
		t.Fatalf("nil Seal = %q", sealed)
	}
	for _, c := range []*store.Cipher{none, newCipher(t, 1)} {
		got, err := c.Open(sealed, []byte("other ad is not checked for plaintext"))
		if err != nil || string(got) != "hello" {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
}

func TestNewCipherKeySize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := store.NewCipher(make([]byte, n)); err == nil {
			t.Errorf("NewCipher with a %d-byte key: nil error", n)
		}
	}
}

// TestCipherFromEnv checks how AGENTMCP_SECRET_KEY is read: the same key
// spelled in hex or any base64 form gives the same Cipher.
func TestCipherFromEnv(t *testing.T) {
	key := make([]byte, store.KeySize)
	for i := range key {
		key[i] = byte(i * 7) // includes bytes that differ between the base64 alphabets
	}
	ref, err := store.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := ref.Seal([]byte("token"), nil)

	for _, tt := range []struct {
		name, value string
		same        bool // reads what ref sealed
		wantErr     bool
		wantNil     bool
	}{
		{name: "unset", value: "", wantNil: true},
		{name: "blank", value: " \n", wantNil: true},
		{name: "hex", value: hex.EncodeToString(key), same: true},
		{name: "HEX with newline", value: strings.ToUpper(hex.EncodeToString(key)) + "\n", same: true},
		{name: "base64", value: base64.StdEncoding.EncodeToString(key), same: true},
		{name: "base64 raw", value: base64.RawStdEncoding.EncodeToString(key), same: true},
		{name: "base64url", value: base64.URLEncoding.EncodeToString(key), same: true},
		{name: "base64url raw", value: base64.RawURLEncoding.EncodeToString(key), same: true},
		{name: "short passphrase", value: "hunter2", wantErr: true},
		{name: "hex of a 16-byte key is a passphrase", value: hex.EncodeToString(key[:16])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(store.EnvSecretKey, tt.value)
			c, err := store.CipherFromEnv()
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), store.EnvSecretKey) {
					t.Fatalf("CipherFromEnv = %v; want an error naming %s", err, store.EnvSecretKey)
				}
				if strings.Contains(err.Error(), tt.value) {
					t.Fatalf("error %q contains the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (c == nil) != tt.wantNil {
				t.Fatalf("CipherFromEnv = %v, want nil: %v", c, tt.wantNil)
			}
			if c == nil {
				return
			}
			_, err = c.Open(sealed, nil)
			if tt.same && err != nil {
				t.Fatalf("cipher from %q cannot open what the key sealed: %v", tt.value, err)
			}
			if !tt.same && !errors.Is(err, store.ErrDecrypt) {
				t.Fatalf("a passphrase cipher opened what the raw key sealed: %v", err)
			}
		})
	}
}

// TestCipherFromPassphrase checks that derivation is deterministic and
// depends on the passphrase.
func TestCipherFromPassphrase(t *testing.T) {
	t.Parallel()
	// Derivation is slow on purpose (and slower under -race): derive the
	// three keys at once.
	phrases := []string{"correct horse battery staple", "correct horse battery staple", "correct horse battery stapler"}
	ciphers := make([]*store.Cipher, len(phrases))
	errs := make([]error, len(phrases))
	var wg sync.WaitGroup
	for i, p := range phrases {
		wg.Go(func() { ciphers[i], errs[i] = store.CipherFromPassphrase(p) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	a1, a2, b := ciphers[0], ciphers[1], ciphers[2]
	sealed := a1.Seal([]byte("x"), nil)
	if _, err := a2.Open(sealed, nil); err != nil {
		t.Fatalf("same passphrase: %v", err)
	}
	if _, err := b.Open(sealed, nil); !errors.Is(err, store.ErrDecrypt) {
		t.Fatalf("other passphrase: %v, want ErrDecrypt", err)
	}
	if _, err := store.CipherFromPassphrase(strings.Repeat("x", store.MinPassphraseLen-1)); err == nil {
		t.Fatal("short passphrase: nil error")
	}
}

func FuzzCipherOpen(f *testing.F) {
	c := newCipher(f, 1)
	f.Add(c.Seal([]byte("secret"), []byte("ad")), []byte("ad"))
	f.Add([]byte("plain:x"), []byte(nil))
	f.Add([]byte("aesgcm1:"), []byte(nil))
	f.Fuzz(func(t *testing.T, stored, ad []byte) {
		for _, c := range []*store.Cipher{nil, c} {
			got, err := c.Open(stored, ad)
			if err != nil && (got != nil || !errors.Is(err, store.ErrDecrypt)) {
				t.Fatalf("Open = %q, %v", got, err)
			}
			if err == nil {
				if again, err := c.Open(c.Seal(got, ad), ad); err != nil || !bytes.Equal(again, got) {
					t.Fatalf("reseal: %q, %v", again, err)
				}
			}
		}
	})
}

func TestResumable(t *testing.T) {
	discover := json.RawMessage(`{"serverInfo":{}}`)
	for _, tt := range []struct {
		name     string
		in, want store.ServerOptions
	}{
		{"legacy session", store.ServerOptions{SessionID: "s", ProtocolVersion: "2025-06-18"},
			store.ServerOptions{SessionID: "s", ProtocolVersion: "2025-06-18"}},
		{"session without version", store.ServerOptions{SessionID: "s", DiscoverResult: discover, TransportType: "sse"},
			store.ServerOptions{TransportType: "sse"}},
		{"stateless with discover result", store.ServerOptions{ProtocolVersion: store.StatelessProtocolVersion, DiscoverResult: discover},
			store.ServerOptions{ProtocolVersion: store.StatelessProtocolVersion, DiscoverResult: discover}},
		{"stateless without discover result", store.ServerOptions{SessionID: "s", ProtocolVersion: store.StatelessProtocolVersion, Headers: map[string]string{"a": "b"}},
			store.ServerOptions{Headers: map[string]string{"a": "b"}}},
		{"nothing", store.ServerOptions{}, store.ServerOptions{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.Resumable()); diff != "" {
				t.Fatalf("Resumable (-want +got):\n%s", diff)
			}
		})
	}
}

func ExampleCipher() {
	key := bytes.Repeat([]byte{7}, store.KeySize) // use 32 random bytes
	c, err := store.NewCipher(key)
	if err != nil {
		panic(err)
	}
	sealed := c.Seal([]byte("refresh-token"), []byte("where it is stored"))
	plain, err := c.Open(sealed, []byte("where it is stored"))
	fmt.Println(store.IsEncrypted(sealed), string(plain), err)

	var none *store.Cipher // no key configured
	fmt.Printf("%s\n", none.Seal([]byte("refresh-token"), nil))
	// Output:
	// true refresh-token <nil>
	// plain:refresh-token
}

package oauth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// ErrNotFound is returned by Storage.Get and Storage.Take for a missing (or
// expired) key.
var ErrNotFound = errors.New("oauth: not found")

// Storage keeps the OAuth data of one MCP server: registrations, tokens,
// pending states. The agent backs it with its store.Store (encrypted when a
// key is configured); MemoryStorage keeps it in memory.
//
// Implementations must be safe for concurrent use.
type Storage interface {
	// Get returns the value of key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put sets key; a zero expiresAt means it never expires.
	Put(ctx context.Context, key string, value []byte, expiresAt time.Time) error
	// Delete deletes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Take deletes key and returns its value atomically: of concurrent
	// callers, exactly one gets the value (single-use states).
	Take(ctx context.Context, key string) ([]byte, error)
	// Lock runs fn while holding the lock called name, for every user of
	// this storage (across processes where the backend can).
	Lock(ctx context.Context, name string, fn func(ctx context.Context) error) error
}

// MemoryStorage is a Storage in memory, for programs without a store (the
// CLI, tests). Its zero value is ready to use.
type MemoryStorage struct {
	// Now tells time for expiry. Nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	data  map[string]memEntry
	locks map[string]*sync.Mutex
}

type memEntry struct {
	value   []byte
	expires time.Time
}

func (m *MemoryStorage) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *MemoryStorage) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.data[key]
	if !ok || (!e.expires.IsZero() && !m.now().Before(e.expires)) {
		return nil, ErrNotFound
	}
	return append([]byte(nil), e.value...), nil
}

func (m *MemoryStorage) Put(_ context.Context, key string, value []byte, expiresAt time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = map[string]memEntry{}
	}
	m.data[key] = memEntry{append([]byte(nil), value...), expiresAt}
	return nil
}

func (m *MemoryStorage) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, key)
	return nil
}

func (m *MemoryStorage) Take(ctx context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.data[key]
	delete(m.data, key)
	if !ok || (!e.expires.IsZero() && !m.now().Before(e.expires)) {
		return nil, ErrNotFound
	}
	return e.value, nil
}

func (m *MemoryStorage) Lock(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[string]*sync.Mutex{}
	}
	l, ok := m.locks[name]
	if !ok {
		l = new(sync.Mutex)
		m.locks[name] = l
	}
	m.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	return fn(ctx)
}

// Keys returns the keys with prefix, for tests and diagnostics.
func (m *MemoryStorage) Keys(prefix string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.data {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// Package store defines how agentmcp keeps agents' MCP servers and their
// OAuth data: the Store interface, its records, and the Cipher that
// encrypts secrets at rest. Backends live in subpackages: store/sqlite (the
// embedded default, one machine) and store/postgres (several replicas
// sharing one database). Package storetest is the behaviour suite both pass.
//
// Many agents share one database. Every record belongs to a namespace, the
// agent's "class/instance", and every operation is scoped by one: agents
// never see each other's servers or keys.
//
// A Server row holds what an agent needs to reconnect after a restart: id,
// name, URL, OAuth callback URL, client id, pending authorization URL, and
// ServerOptions (transport, headers, retry, advertised capabilities, the
// session to resume). The key-value part holds a server's OAuth data, filed
// under (namespace, server id, key). The oauth package's keys follow the
// reference layout without its "/{agent}/{server}/" prefix, which the
// scope replaces:
//
//	{clientID}/client_info/                       client registration
//	{clientID}/token                              token set
//	oauth_discovery                               discovery state
//	state/{nonce}                                 OAuth state, 10 min, taken once (KVTake)
//	{clientID}/code_verifier/{nonce}              PKCE verifier, 10 min, taken once
//	{clientID}/code_verifier_challenge/{S256}     verifier not yet bound to a state
//
// A server marked KeepAwake keeps its agent awake: the host wakes it when the
// program starts (KeepAwakeLister finds such agents among many) and never
// hibernates it. BatchPutter writes many servers in one transaction.
// ExposureStore keeps each agent's exposure rules (what its MCP endpoint
// exposes; see agent.Exposure), apart from its servers. TaskStore keeps
// its tasks (tool calls running as MCP tasks), so that their polling
// resumes after a restart; RunningTaskLister finds the agents with tasks
// still running, which the host wakes when the program starts. PolicyStore keeps each agent's tool policy
// (package policy) as a JSON document; ApprovalStore its approvals (calls
// the policy asks a person about), stored before the call is sent,
// answered once (SwapApproval from pending), started once (from approved
// to running) and deleted once they ended (DeleteApprovals). PinStore
// keeps the pinned definitions of its servers' tools (store.Pin), one
// readable record per tool. AuditStore keeps each agent's audit log
// (store.AuditRecord), appended in batches, unfenced (each process writes
// its own calls' records), queried by time, server, tool and decision
// with a cursor, pruned by count and age; a record's arguments are sealed
// by the store's Cipher, and not kept at all without a key.
//
// DeleteServer removes all of a server's keys with its row, and RenameServer
// (the move from a generated id to a stable one) moves them (and its pins)
// with it, each in one transaction.
//
// A Fence (WithFence, FenceFrom) ties server writes to one ownership of an
// agent when several replicas share a database: store/postgres refuses,
// with ErrFenced, a server write of the fence's namespace once another
// replica has claimed the agent, the lease was released or its replica has
// expired, checked in the write's own transaction. Key-value writes and
// locks are never fenced: an OAuth token rotated by the authorization server
// must be stored whoever refreshed it. store/sqlite ignores fences (one
// process per database file).
//
// # Usage
//
//	cipher, err := store.CipherFromEnv() // nil when AGENTMCP_SECRET_KEY is unset
//	if err != nil {
//		return err
//	}
//	st, err := sqlite.Open(ctx, "agentmcp.db", &sqlite.Options{Cipher: cipher})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//
//	err = st.PutServer(ctx, store.Server{Namespace: "chat/alice", ID: "github", Name: "GitHub", URL: u})
//	err = st.UpdateServer(ctx, "chat/alice", "github", func(s *store.Server) error {
//		s.AuthURL = "" // the OAuth flow finished
//		return nil
//	})
//	err = st.KVPut(ctx, "chat/alice", "github", "state/"+nonce, state, time.Now().Add(10*time.Minute))
//	state, err := st.KVTake(ctx, "chat/alice", "github", "state/"+nonce) // single use
//
// # Secrets at rest
//
// With a Cipher, a backend encrypts each server's ServerOptions (header
// values and session ids are credentials), the secret parts of its URL
// (userinfo, query and fragment) and every key-value value with AES-256-GCM
// before writing them; names, URLs without those parts, client ids and keys
// stay readable. A backend stores the URL split: its url column holds it
// without the secret parts, and the sealed options hold the whole URL when
// it has any; rows written before URLs were split (the whole URL in the
// column) read the same, and are split when next written. Without a Cipher
// a backend stores everything in plaintext and the server should say so
// once at start. Stored values carry a versioned prefix ("plain:" or
// "aesgcm1:"), so rows written before a key was configured stay readable
// with it (they are encrypted when next written). The key comes from AGENTMCP_SECRET_KEY (CipherFromEnv), as 32
// bytes in hex or base64 used as is, or as a passphrase stretched with
// PBKDF2-HMAC-SHA256. Losing the key loses the encrypted values: reads fail
// with ErrDecrypt, and the server must be added again. There is no key
// rotation yet.
//
// # Deadlines and outages
//
// Every operation of the backends has a deadline (their Options.Timeout,
// DefaultTimeout unless set) besides the caller's ctx: a database that
// hangs (its processes stopped, a network that drops packets) makes the
// operation fail with ErrUnavailable when it passes, rather than wait for
// the database. So do a lost connection, a database shutting down or
// starting, a full disk and a read-only file system. A write that fails so
// changed nothing (store/postgres names the one exception: a COMMIT whose
// answer was lost). Backends that count the writes they had refused
// implement WriteHealth (both do): the count, and the reason while the
// database refuses writes, for metrics and a readiness check; they log
// refused writes to their Options.Logger, at most one line every 10
// seconds with the count of the others. A Probe is that readiness check
// (agentmcp serve's /readyz): whether the store answers and accepts
// writes, asked at most once a second.
//
// # Concurrency
//
// A Store is safe for concurrent use by many goroutines, and its
// operations are atomic across processes sharing the database: KVTake has
// exactly one winner, UpdateServer never loses a concurrent update,
// RenameServer and DeleteServer never leave a row without its keys or the
// other way round. Locker.WithLock gives single-flight work per server
// (one token refresh at a time); its scope is per backend. A Cipher is
// immutable and safe for concurrent use.
//
// # Errors
//
// Errors wrap sentinels for errors.Is: ErrNotFound (missing or expired),
// ErrConflict (RenameServer onto an id in use), ErrDecrypt (encrypted value
// without the right key), ErrFenced (a write under a stale Fence; nothing
// was written), ErrUnavailable (the database did not answer by the
// deadline, cannot be reached, or refuses writes; retry later). Messages name the operation, the server id and
// the namespace, never a key (keys carry OAuth nonces) or a value.
package store

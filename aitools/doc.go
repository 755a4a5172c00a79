// Package aitools turns MCP tools into tools an LLM can call: the Go
// counterpart of the seed's getAITools. It gives every tool a name that
// OpenAI and Anthropic accept, validates a model's arguments against the
// tool's input schema before anything reaches the server, and caches what
// it derives from a catalog so that asking again is almost free.
//
// The package knows no LLM SDK and no MCP client: adapters for SDKs live
// in subpackages (aitools/openai, aitools/anthropic), and tools are called
// through a [Caller] (for a mcpclient.Manager, its CallTool;
// Manager.AITools wires it all up).
//
// # Usage
//
//	cache := aitools.NewCache(call, nil)
//	set := cache.Build(catalog) // []aitools.MCPTool, the whole catalog
//	for t := range set.All() {
//		// offer t.Key, t.Description, t.InputSchema to the model
//	}
//	res, err := set.Execute(ctx, key, argsJSON)  // one call
//	outcomes := set.ExecuteAll(ctx, calls, 0)    // a reply's calls, in parallel
//
// # Keys
//
// A tool's key is the seed's "tool_<serverId without '-'>_<toolName>"
// ([SeedKey]; server "server-1", tool "create_charge" gives
// tool_server1_create_charge) when that is a valid provider name
// (^[a-zA-Z0-9_-]{1,64}$, [ValidKey]) and no other tool in the catalog has
// the same seed key. Otherwise it is a safe key ([SafeKey]):
// "tool_<server>_<tool>_<hash>", invalid characters replaced by "_",
// shortened to 64 characters with the tool name keeping the larger share,
// and the first 8 hex digits of SHA-256(serverID + "\x00" + toolName).
//
// Collisions: when several tools want the same key, none of them gets it;
// all of them move on to a longer key. Two tools with the same seed key
// ("my-server" and "myserver" with the same tool; server "a_b" with tool
// "c" and server "a" with tool "b_c") both get their safe keys; tools
// whose safe keys collide (which takes a collision of 32 bits of SHA-256
// with equal fragments) get 16, then 32 hex digits; identical identities
// (a server listing a name twice) get hashes over an ordinal. Every tool
// stays in the set; [ToolSet.Collisions] reports each contested key with
// the keys its tools got, and [ToolSet.Lookup] maps every key back to its
// server id and tool name.
//
// Stability: a tool's key is a function of its own identity (server id,
// tool name) and of which other tools want the same key; it does not
// depend on the order of the catalog, on a filter, on restarts, or on
// tools that do not collide with it. So it survives restarts and catalog
// refreshes, with one exception: when a tool with the same seed key
// appears, both tools switch to their safe keys (and switch back when it
// goes). That is deliberate: the only alternative that keeps a key is to
// let one of the two keep it, and any rule for choosing depends on order
// or favours one server arbitrarily; worse, a key could then pass from one
// tool to another while both exist. With this rule a key never changes
// its meaning while its tool exists: a stale key (in a model's
// conversation history, say) fails with ErrUnknownTool instead of calling
// a different tool. Safe keys never change: they depend on the identity
// alone.
//
// # Validation
//
// Arguments are validated with github.com/santhosh-tekuri/jsonschema/v6:
// JSON Schema draft 2020-12 by default, draft-07 (and 2019-09, 6, 4) when
// $schema says so. References to other documents are never loaded, from
// the network or from files. Validators are compiled on a tool's first
// call, not when the ToolSet is built, so a catalog of thousands of tools
// costs nothing until its tools are used. A schema that cannot be compiled
// (an external $ref, a regular expression Go does not support, a schema
// over CacheOptions.MaxSchemaBytes) is not enforced: the call goes to the
// server, which validates its own inputs, and [Tool.SchemaError] says why.
// A [Validator] compiles any schema the same way: mcpclient checks tools'
// structured results against their output schemas with it, and a result
// that breaks its schema reaches Execute as the Caller's error
// (mcpclient.OutputSchemaError), apart from a [*ToolError].
//
// # Result budgets
//
// [ResultText] renders a whole result; binary content (images, audio,
// blobs) is always a note with its MIME type and size, never inlined in
// text. A [Budget] caps what one result puts in the model's context, in
// bytes or estimated tokens ([EstimateTokens]: a quarter of the bytes):
// [Budget.Text] shows a result's first part and a note, together within
// the budget, and keeps the whole text in [Results] under a handle. The
// model reads on with the read meta-tool ([ReadToolName], defined by
// [ReadToolDef], answered by [Budget.ExecuteRead] or, for a reply's
// calls, [Budget.ExecuteAll]) by handle and offset; reading from 0 with
// each answer's next offset returns every byte. Results holds at most
// ResultsOptions.MaxBytes (64 MiB by default), evicting the oldest
// results first; a program gets a kept result whole with
// [Results.Result]. The adapters take a Budget in their Options (the
// Anthropic adapter counts inlined images by their base64 size).
//
// # Caching
//
// A [Cache] keeps, per tool, its schemas (decoded, hashed, and compiled on
// first use) and its key material. [Cache.Build] on the same definitions
// as last time (the same *mcp.Tool pointers, which a mcpclient.Manager
// replaces only when it lists a server's tools again) returns the previous
// ToolSet. After a refresh, only replaced definitions are marshalled and
// hashed, and only schemas whose bytes changed are decoded again and, on
// their next call, recompiled. Tools that left the catalog are forgotten.
//
// # Views
//
// [Tool.View] is the ui:// URI of a tool's MCP Apps view (ViewURI), for a
// Go host that renders it after a call (mcpclient.Manager.ToolView reads
// it); [Tool.AppOnly] marks a tool that its server meant for views alone
// (_meta.ui.visibility ["app"]), which a host may keep from the model (an
// agent's ToolSet for its own LLM leaves them out).
//
// # Search
//
// An [Index] finds a ToolSet's tools by what they do: a person's query
// ("open a pull request") against each tool's name, title, description,
// parameter names and descriptions, and server id, split into terms by
// [Terms] (snake_case, camelCase, kebab-case and dotted names split into
// words; plurals and verb forms meet their stem). It ranks with BM25F and
// common synonyms ([RankBoosted], the default; [RankBM25] and [RankBM25F]
// are the alternatives it was chosen over, on the retrieval evaluation in
// internal/searcheval). [Index.Update] follows a changing catalog
// incrementally: only new or replaced definitions are read.
//
// [Index.SearchMode] is the ToolSet to give a model instead of the whole
// catalog: two meta-tools, search_tools (a query in, the best matches'
// keys, descriptions and input schemas out) and call_tool (a key and
// arguments, validated and called as Execute does), plus the tools
// [SearchModeOptions] keeps always loaded. Any adapter sends and runs it
// as any ToolSet; the deferred tools can also be called by their own keys.
// mcpclient.Manager.SearchMode and SearchTools keep one index per Manager.
//
// # Concurrency
//
// A Cache, a ToolSet and its Tools are safe for concurrent use. An Index
// is too: searches run in parallel; Update excludes them while it runs. ToolSets
// are immutable; the schemas they share with the Cache must not be
// modified. Build holds the Cache's lock while it builds (no I/O, no
// callbacks). ExecuteAll runs calls on goroutines it waits for before it
// returns.
//
// # Errors
//
// Execute returns an [*ArgumentsError] (wrapping ErrInvalidArguments) for
// arguments that were not sent, with a message written for the model that
// names each offending field and the constraint it breaks; a [*ToolError]
// (wrapping ErrToolFailed) for a result with isError, whose message is the
// result's first text, else "tool call failed"; and the Caller's error for
// a call that did not complete. An unknown key wraps ErrUnknownTool.
// call_tool returns the errors of the tool it calls; a key it does not
// know wraps ErrUnknownTool.
package aitools

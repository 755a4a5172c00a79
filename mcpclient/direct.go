//lint:file-ignore SA1019 roots, sampling and logging are deprecated from 2026-07-28 on (SEP-2577); agentmcp speaks the earlier eras too, which have them

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/agentmcp/agentmcp/internal/jsonrpcwire"
	"github.com/agentmcp/agentmcp/mcpclient/transport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the Manager's direct path: the requests it sends past
// go-sdk's JSON-RPC layer (its jsonrpc2 connection, request ids, result
// decoding and, for the lists, its session methods), straight through
// the connection of one of our own HTTP transports
// (transport.DirectCaller). It exists for speed alone (docs/PERFORMANCE.md
// sections 11 and 12) and goes when go-sdk can take a decoded result
// (docs/UPSTREAM.md items 2 and 7; README "Bypasses").
//
// What takes it: tools/call without a progress token, the four list
// requests, and the handshake (initialize, server/discover), on a session
// whose transport is a DirectCaller and whose connection is the Manager's
// sessionConn. Everything else goes through go-sdk.
//
// What it must do as go-sdk does, and the test that proves each:
//
//   - encode params to the bytes go-sdk's jsonrpc2 sends, _meta included
//     (jsonrpcwire.TestMarshalSDKParams, TestAppendParams, TestSDKLayout),
//     and initialize's capabilities as go-sdk's initializeParamsV2 writes
//     them (TestMarshalInitialize);
//   - decode results to what go-sdk's session returns, large texts
//     included, in both eras (TestLargeResults; jsonrpcwire's
//     FuzzDecodeMessage against go-sdk's decoder);
//   - keep request ids unique on the session beside go-sdk's own
//     ("agentmcp-N" strings, go-sdk's integers) (TestRequestIDs);
//   - cancel as go-sdk does: a 2025-11-25 request with
//     notifications/cancelled naming its id, ctx.Err() returned as it is
//     (TestCancel, TestRequestIDs, transport's TestCallDirectCancel);
//   - end calls in flight with mcp.ErrConnectionClosed when the
//     connection ends (transport's TestCallDirectConnectionEnds);
//   - route every progress notification of a call before it returns: a
//     call with a progress token goes through go-sdk, whose wait ensures
//     it (TestProgress);
//   - let go-sdk's multi round-trip middleware fulfil a 2026-07-28
//     input_required result: the request goes again through go-sdk, whose
//     first round the transport answers with the result it has
//     (TestElicitationForm, TestInputNotCached);
//   - answer a resumed session's handshake locally, with the saved result
//     (transport's TestCallDirectHandshake);
//   - leave out of a list the tools go-sdk's ListTools leaves out
//     for their x-mcp-header annotations (TestToolHeaderFilter), and never
//     serve a list from go-sdk's cache (TestRefreshPastListTTL);
//   - give a 2026-07-28 list the request _meta go-sdk gives the session's
//     requests (TestModernListMeta).
//
// It is the innermost of the Manager's sending middleware, so that the
// others (telemetry, the calls in flight, the elicitation seed, URL
// elicitations) see every request the same either way.

// directMiddleware sends tools/call, the four list requests and the
// handshake (initialize, server/discover; a resumed session's is answered
// locally by the transport) of a session on one of our own HTTP
// transports straight through its
// connection (transport.DirectCaller): the response comes back on the
// caller's goroutine, its result decoded once from the bytes, without
// go-sdk's jsonrpc2 bookkeeping, goroutine handoffs and its streaming
// decoder (docs/PERFORMANCE.md). It is the innermost of the Manager's
// middleware, so that they (telemetry, the calls in flight, the
// elicitation seed, URL elicitations) see every request the same either
// way. Everything else goes through go-sdk, as do:
//
//   - a call with a progress token: its progress notifications, handed to
//     go-sdk's reading of the connection, must all be routed (sessionConn)
//     before the call returns, which only go-sdk's own wait ensures;
//   - a 2026-07-28 input_required result: go-sdk's multi round-trip
//     middleware, below this one, fulfils the input requests, so the
//     request goes again through it; the transport answers its first
//     round locally with the result it already has (transport.DirectCaller),
//     so the server sees the rounds it would have seen.
//
// Its requests have string ids ("agentmcp-N", N counted from the
// session's idBase), apart from go-sdk's integers: both kinds are unique
// on the session.
func (h *sessionHooks) directMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if h.reqMeta.Load() == nil {
			h.noteRequestMeta(req)
		}
		dc, ok := h.s.raw.(transport.DirectCaller)
		if !ok {
			return next(ctx, method, req)
		}
		pc, ok := h.s.conn.(*sessionConn)
		if !ok {
			return next(ctx, method, req)
		}
		var res mcp.Result
		switch method {
		case "tools/call":
			if p, ok := req.GetParams().(*mcp.CallToolParams); !ok || p.GetProgressToken() != nil {
				return next(ctx, method, req)
			}
			res = &mcp.CallToolResult{}
		case "tools/list":
			res = &mcp.ListToolsResult{}
		case "prompts/list":
			res = &mcp.ListPromptsResult{}
		case "resources/list":
			res = &mcp.ListResourcesResult{}
		case "resources/templates/list":
			res = &mcp.ListResourceTemplatesResult{}
		case "initialize":
			res = &mcp.InitializeResult{}
		case "server/discover":
			res = &mcp.DiscoverResult{}
		default:
			return next(ctx, method, req)
		}
		params, err := marshalParams(req.GetParams())
		if err != nil {
			return nil, fmt.Errorf("calling %q: %w", method, err)
		}
		id, _ := jsonrpc.MakeID("agentmcp-" + strconv.FormatInt(h.s.idBase+h.directID.Add(1), 10))
		if err := pc.callDirect(ctx, dc, &jsonrpc.Request{ID: id, Method: method, Params: params}, res); err != nil {
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err() // as go-sdk returns it
			case errors.Is(err, mcp.ErrConnectionClosed):
				return nil, err
			}
			return nil, fmt.Errorf("calling %q: %w", method, err)
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r.NeedsInput() {
			return next(ctx, method, req)
		}
		return res, nil
	}
}

// requestMeta is the _meta go-sdk adds to each request of a 2026-07-28
// session (its injectRequestMeta), the values of its three entries: kept
// for the session's life, so without a map's overhead.
type requestMeta struct {
	version    string
	info, caps any
}

// into adds the entries to m that it does not have, as go-sdk does.
func (r *requestMeta) into(m mcp.Meta) {
	for k, v := range map[string]any{mcp.MetaKeyProtocolVersion: r.version, mcp.MetaKeyClientInfo: r.info, mcp.MetaKeyClientCapabilities: r.caps} {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
}

// noteRequestMeta keeps the request _meta go-sdk added to req, a request
// of a 2026-07-28 session that went through go-sdk's session after its
// handshake (its subscriptions/listen, a call, a list): the same for every
// such request, as go-sdk builds it from the session's negotiated version
// and its client's fixed options. server/discover's is not taken: it
// carries the version asked for, which a negotiation may change.
func (h *sessionHooks) noteRequestMeta(req mcp.Request) {
	p := req.GetParams()
	if p == nil {
		return
	}
	if _, ok := p.(*mcp.DiscoverParams); ok {
		return
	}
	got := p.GetMeta()
	version, _ := got[mcp.MetaKeyProtocolVersion].(string)
	info, ok := got[mcp.MetaKeyClientInfo]
	caps, ok2 := got[mcp.MetaKeyClientCapabilities]
	if version < protocolModern || !ok || !ok2 {
		return
	}
	h.reqMeta.CompareAndSwap(nil, &requestMeta{version: version, info: info, caps: caps})
}

// marshalParams encodes request params to the bytes go-sdk's jsonrpc2
// sends (encoding/json without escaping HTML), without reflection for a
// tools/call's or a list's params and the _meta go-sdk adds to them
// (jsonrpcwire.AppendParams).
func marshalParams(params mcp.Params) (json.RawMessage, error) {
	if p, ok := params.(*mcp.InitializeParams); ok {
		return marshalInitialize(p)
	}
	return jsonrpcwire.MarshalParams(params)
}

// initializeParams is what go-sdk's sending handler encodes for initialize
// params (its unexported initializeParamsV2, mcp/shared.go, a workaround
// for go-sdk's issue 607): the capabilities with roots taken from RootsV2,
// a pointer, so that a client without roots declares none (the struct
// field Roots, never empty to encoding/json, would declare them always).
type initializeParams struct {
	*mcp.InitializeParams
	Capabilities *initializeCapabilities `json:"capabilities"`
}

type initializeCapabilities struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// marshalInitialize encodes p as go-sdk sends it.
func marshalInitialize(p *mcp.InitializeParams) (json.RawMessage, error) {
	v := &initializeParams{InitializeParams: p}
	if p.Capabilities != nil {
		v.Capabilities = &initializeCapabilities{ClientCapabilities: *p.Capabilities, Roots: p.Capabilities.RootsV2}
	}
	return jsonrpcwire.AppendJSON(nil, v)
}

// listPage requests one page of a list. On a session over one of our HTTP
// transports, whose lists directMiddleware sends itself, the request goes
// through the Manager's sending middleware (sessionHooks.send: telemetry,
// the calls in flight, URL elicitations, then the transport) without
// go-sdk's session method, and direct is true. That method adds nothing to
// a legacy list but a check of the tools' x-mcp-header annotations, which
// encodes and decodes every tool's input schema again (the Manager checks
// them cheaply: toolfilter.Valid); to a 2026-07-28 list it also adds the
// request _meta of that era, which the session's earlier requests showed
// (noteRequestMeta: its handshake's), and puts the result in go-sdk's list
// cache, which the Manager never reads (its catalog is the cache). A
// 2026-07-28 session whose _meta is not known yet keeps go-sdk's method.
// sdk is that method.
func listPage[P mcp.Params, R mcp.Result](ctx context.Context, s *session, method string, params P, sdk func(context.Context, P) (R, error)) (r R, direct bool, err error) {
	meta, ok := s.listsDirect()
	if !ok {
		r, err = sdk(ctx, params)
		return r, false, err
	}
	if meta != nil {
		// A 2026-07-28 list: the _meta go-sdk's method would add.
		m := make(mcp.Meta, 3+len(params.GetMeta()))
		maps.Copy(m, params.GetMeta())
		meta.into(m)
		params.SetMeta(m)
	}
	res, err := s.hooks.send(ctx, method, &mcp.ClientRequest[P]{Session: s.cs, Params: params})
	if err != nil {
		return r, true, err
	}
	r, ok = res.(R)
	if !ok {
		return r, true, fmt.Errorf("%s: unexpected result %T", method, res)
	}
	return r, true, nil
}

// listsDirect reports whether listPage sends the session's lists through
// its middleware alone: a session on a connection that directMiddleware
// sends lists on, legacy, or 2026-07-28 once the _meta go-sdk adds to its
// requests is known (meta, which such a list must carry; nil for a
// legacy session).
func (s *session) listsDirect() (meta *requestMeta, ok bool) {
	if s.hooks == nil || s.hooks.send == nil {
		return nil, false
	}
	init := s.cs.InitializeResult()
	if init == nil {
		return nil, false
	}
	if init.ProtocolVersion >= protocolModern {
		if meta = s.hooks.reqMeta.Load(); meta == nil {
			return nil, false
		}
	}
	_, ok = s.raw.(transport.DirectCaller)
	_, ok2 := s.conn.(*sessionConn)
	return meta, ok && ok2
}

// notSentDirectly ends sessionHooks.send, below directMiddleware, which
// sends every request listPage hands it.
func notSentDirectly(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
	return nil, fmt.Errorf("%s was not sent on the transport's direct path", method)
}

// overNothing chains the session's sending middleware, in the same order,
// over nothing: sessionHooks.send, for the requests directMiddleware always
// sends itself (listPage).
func overNothing(sending []mcp.Middleware) mcp.MethodHandler {
	send := mcp.MethodHandler(notSentDirectly)
	for _, mw := range slices.Backward(sending) {
		send = mw(send)
	}
	return send
}

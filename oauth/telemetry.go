package oauth

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/netguard"
)

// This file is the provider's OpenTelemetry instrumentation: a span for
// each discovery, registration and token request (docs/OBSERVABILITY.md),
// and agentmcp.oauth.token.requests by grant and outcome. Attributes name
// the server, the grant, the authorization server's host and the OAuth
// error code; never a URL's path or query, a code, a token or a client
// secret.

// instrumentationName is the name of the provider's tracer and meter.
const instrumentationName = "github.com/agentmcp/agentmcp/oauth"

var (
	attrGrant    = attribute.Key("agentmcp.oauth.grant_type")
	attrDocument = attribute.Key("agentmcp.oauth.document")
	attrOutcome  = attribute.Key("agentmcp.outcome")
	attrError    = attribute.Key("error.type")
	attrAddress  = attribute.Key("server.address")
)

// span starts an INTERNAL span of the provider named name, about the
// endpoint at raw (whose host only is recorded).
func (p *Provider) span(ctx context.Context, name, raw string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tp := p.cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	ctx, span := tp.Tracer(instrumentationName).Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(mcpclient.AttrServerID.String(p.cfg.ServerID))
		if u, err := url.Parse(raw); err == nil && u.Hostname() != "" {
			span.SetAttributes(attrAddress.String(u.Hostname()))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// end ends span with err's outcome.
func end(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		et := errorType(err)
		span.SetAttributes(attrError.String(et))
		span.SetStatus(codes.Error, et)
	}
	span.End()
}

// errorType is the low-cardinality class of an OAuth error: the OAuth
// error code or HTTP status of a token endpoint's refusal, "blocked" for a
// refused address, "timeout", "cancelled" or "_OTHER".
func errorType(err error) string {
	var terr *TokenError
	switch {
	case errors.As(err, &terr) && terr.Code != "":
		return terr.Code
	case errors.As(err, &terr):
		return strconv.Itoa(terr.StatusCode)
	case errors.Is(err, netguard.ErrBlockedURL):
		return "blocked"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "_OTHER"
}

// tokenRequest is tokenRequestUntraced in an agentmcp.oauth.token span
// (agentmcp.oauth.refresh for a refresh), counted by
// agentmcp.oauth.token.requests.
func (p *Provider) tokenRequest(ctx context.Context, endpoint string, cl client, form url.Values) (*tokenResponse, error) {
	grant := form.Get("grant_type")
	name := "agentmcp.oauth.token"
	if grant == "refresh_token" {
		name = "agentmcp.oauth.refresh"
	}
	ctx, span := p.span(ctx, name, endpoint, attrGrant.String(grant))
	tr, err := p.tokenRequestUntraced(ctx, endpoint, cl, form)
	end(span, err)
	mp := p.cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	requests, merr := mp.Meter(instrumentationName).Int64Counter("agentmcp.oauth.token.requests",
		metric.WithUnit("{request}"), metric.WithDescription("Token endpoint requests (code exchanges, refreshes, client credentials), by grant and outcome."))
	if merr == nil && requests.Enabled(ctx) {
		attrs := []attribute.KeyValue{mcpclient.AttrServerID.String(p.cfg.ServerID), attrGrant.String(grant), attrOutcome.String("success")}
		if err != nil {
			attrs[2] = attrOutcome.String("failure")
			attrs = append(attrs, attrError.String(errorType(err)))
		}
		requests.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
	return tr, err
}

// protectedResource is protectedResourceUntraced in an
// agentmcp.oauth.discover span.
func (p *Provider) protectedResource(ctx context.Context, fromHeader, resource string) (*oauthex.ProtectedResourceMetadata, error) {
	ctx, span := p.span(ctx, "agentmcp.oauth.discover", resource, attrDocument.String("protected_resource"))
	prm, err := p.protectedResourceUntraced(ctx, fromHeader, resource)
	end(span, err)
	return prm, err
}

// authServer is authServerUntraced in an agentmcp.oauth.discover span.
func (p *Provider) authServer(ctx context.Context, issuer string) (*oauthex.AuthServerMeta, error) {
	ctx, span := p.span(ctx, "agentmcp.oauth.discover", issuer, attrDocument.String("authorization_server"))
	asm, err := p.authServerUntraced(ctx, issuer)
	end(span, err)
	return asm, err
}

// register is registerUntraced in an agentmcp.oauth.register span.
func (p *Provider) register(ctx context.Context, endpoint string, meta *oauthex.ClientRegistrationMetadata) (*registered, error) {
	ctx, span := p.span(ctx, "agentmcp.oauth.register", endpoint)
	r, err := p.registerUntraced(ctx, endpoint, meta)
	end(span, err)
	return r, err
}

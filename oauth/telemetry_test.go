package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentmcp/agentmcp/internal/testing/oauthtest"
	"github.com/agentmcp/agentmcp/internal/testing/oteltest"
	"github.com/agentmcp/agentmcp/oauth"
)

// TestTelemetry: an authorisation and two refreshes (one refused for a
// while) make spans for the discovery, the registration, the code exchange
// and the refreshes, counted by grant and outcome; no attribute, name or
// status holds the code, a token or the client secret.
func TestTelemetry(t *testing.T) {
	rec := oteltest.New(t)
	spans, tp, reader, mp := rec.Spans, rec.TracerProvider, rec.Reader, rec.MeterProvider

	ctx := testCtx(t)
	clock := oauthtest.NewClock(time.Time{})
	as := oauthtest.NewServer(t, &oauthtest.Options{Now: clock.Now, AccessTokenTTL: time.Minute,
		AuthMethods: []string{"client_secret_basic"}})
	st := &oauth.MemoryStorage{}
	p := newProvider(t, as.URL, st, func(c *oauth.Config) {
		c.Now, c.RefreshAttempts = clock.Now, 1
		c.TracerProvider, c.MeterProvider = tp, mp
	})
	callback := visit(t, as, authURL(t, p, http.StatusUnauthorized, ""))
	code := callback.Get("code")
	if err := p.Exchange(ctx, callback); err != nil {
		t.Fatal(err)
	}
	secrets := []string{code}
	raw, err := st.Get(ctx, keyToken)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Client       struct {
			Secret string `json:"client_secret"`
		} `json:"client"`
	}
	json.Unmarshal(raw, &stored)
	secrets = append(secrets, stored.AccessToken, stored.RefreshToken, stored.Client.Secret)
	for _, s := range secrets {
		if len(s) < 8 {
			t.Fatalf("a secret to look for is too short to be one: %q (all: %q)", s, secrets)
		}
	}

	clock.Advance(2 * time.Minute)
	as.FailTokenRequests(1, oauthtest.FaultUnavailable)
	if _, err := p.Token(ctx); err == nil {
		t.Fatal("a refresh during an outage succeeded")
	}
	tok, err := p.Token(ctx)
	if err != nil || tok == "" || tok == stored.AccessToken {
		t.Fatalf("refresh: %q, %v", tok, err)
	}
	secrets = append(secrets, tok)

	count := map[string]int{}
	for _, s := range spans.Ended() {
		count[s.Name()]++
		for _, sec := range secrets {
			if strings.Contains(s.Name(), sec) || strings.Contains(s.Status().Description, sec) {
				t.Errorf("span %q holds a secret", s.Name())
			}
			for _, kv := range s.Attributes() {
				if strings.Contains(kv.Value.String(), sec) {
					t.Errorf("span %q: attribute %s holds a secret", s.Name(), kv.Key)
				}
			}
		}
		a := map[attribute.Key]string{}
		for _, kv := range s.Attributes() {
			a[kv.Key] = kv.Value.String()
		}
		if a["agentmcp.server.id"] != "srv" || a["server.address"] != "127.0.0.1" {
			t.Errorf("span %q attributes %v", s.Name(), a)
		}
		if s.Name() == "agentmcp.oauth.refresh" && s.Status().Code == codes.Error && a["error.type"] != "temporarily_unavailable" {
			t.Errorf("failed refresh: error.type %q", a["error.type"])
		}
	}
	for name, want := range map[string]int{"agentmcp.oauth.register": 1, "agentmcp.oauth.token": 1, "agentmcp.oauth.refresh": 2} {
		if count[name] != want {
			t.Errorf("%d spans %q; want %d (all: %v)", count[name], name, want, count)
		}
	}
	if count["agentmcp.oauth.discover"] < 1 {
		t.Errorf("no discovery span (all: %v)", count)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "agentmcp.oauth.token.requests" {
				for _, dp := range sum.DataPoints {
					g, _ := dp.Attributes.Value("agentmcp.oauth.grant_type")
					o, _ := dp.Attributes.Value("agentmcp.outcome")
					got[g.String()+" "+o.String()] += dp.Value
				}
			}
		}
	}
	want := map[string]int64{"authorization_code success": 1, "refresh_token failure": 1, "refresh_token success": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("agentmcp.oauth.token.requests{%s} = %d; want %d (all: %v)", k, got[k], v, got)
		}
	}
}

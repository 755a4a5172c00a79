package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentmcp/agentmcp/agent"
	"github.com/agentmcp/agentmcp/api"
	"github.com/agentmcp/agentmcp/mcpclient"
	"github.com/agentmcp/agentmcp/server/internal/stream"
)

// fillAll sets every field of v, recursively, to a value that is not zero,
// so that a field one shape has and the other lacks shows in their JSON.
func fillAll(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		if depth > 6 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillAll(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"k":"v"}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillAll(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillAll(k, depth+1)
		fillAll(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"type": "object"}))
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), depth+1)
			}
		}
	}
}

// TestWireJSON: what the server encodes from the engine's types (agent,
// mcpclient, go-sdk) reads into package api's types and encodes again to
// the same JSON, every field set, so that a client of the API loses
// nothing and a field added on one side only fails here.
func TestWireJSON(t *testing.T) {
	for _, tt := range []struct {
		name        string
		engine, api any
	}{
		{"MCPServersState", &agent.MCPServersState{}, &api.MCPServersState{}},
		{"AddResult", &agent.AddResult{}, &api.AddResult{}},
		{"Elicitation", &agent.Elicitation{}, &api.Elicitation{}},
		{"Exposure", &agent.Exposure{}, &api.Exposure{}},
		{"ServerLog", &mcpclient.ServerLog{}, &api.ServerLog{}},
		{"Tool", &mcpclient.Tool{}, &api.Tool{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fillAll(reflect.ValueOf(tt.engine).Elem(), 0)
			want, err := json.Marshal(tt.engine)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, tt.api); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tt.api)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("the JSON of %T\n%s\nreads into %T as\n%s", tt.engine, want, tt.api, got)
			}
		})
	}
}

// TestWireFrames: the frames the streams send (stream.Encode) from an
// agent's update, every field set, read into api.Frame and
// api.ElicitationsFrame and encode again to the same JSON.
func TestWireFrames(t *testing.T) {
	var up agent.Update
	fillAll(reflect.ValueOf(&up).Elem(), 0)
	frames := stream.Encode(up)
	if len(frames) != 2 {
		t.Fatalf("%d frames, want the state and the elicitations", len(frames))
	}
	for i, into := range []any{&api.Frame{}, &api.ElicitationsFrame{}} {
		if err := json.Unmarshal(frames[i].Data, into); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(into)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(frames[i].Data, got) {
			t.Errorf("the %s frame\n%s\nreads into %T as\n%s", frames[i].Type, frames[i].Data, into, got)
		}
	}
}

// TestWireServerState: GET .../servers/{id} answers what the server
// answered when ServerState embedded agent.MCPServer.
func TestWireServerState(t *testing.T) {
	var srv agent.MCPServer
	fillAll(reflect.ValueOf(&srv).Elem(), 0)
	old := struct {
		ID string `json:"id"`
		agent.MCPServer
		Session   string `json:"session,omitempty"`
		ToolCount int    `json:"toolCount"`
	}{"id", srv, api.SessionLive, 3}
	want, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(api.ServerState{ID: "id", MCPServer: srv.API(), Session: api.SessionLive, ToolCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("ServerState's JSON changed:\nwas %s\nnow %s", want, got)
	}
}

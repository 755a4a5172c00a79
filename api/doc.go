// Package api holds the wire types of agentmcp serve's HTTP API: the JSON
// bodies of its requests and answers, its error codes, the frames of the
// agents' WebSocket and SSE streams and the events of a streamed tool
// call. Package server answers with them; package api/client sends them.
// The routes are listed in package server's documentation.
//
// The types here import nothing of the engine (agent, mcpclient) nor
// go-sdk: where an answer carries an MCP definition or result as the MCP
// server sent it (a tool's schemas, a CallToolResult), the type keeps
// that JSON as a json.RawMessage, for the caller to decode into MCP types
// of its choice. The JSON of every type is the server's: a field added
// here is added there.
//
// # Errors
//
// Every error response is JSON, {"error": {"code": "...", "message":
// "...", "serverId": "..."}} (ErrorResponse), with a stable code (the
// Code constants) and a message safe to show: no tokens, header values or
// URL queries. A connect_failed error (an add or reconnect whose server
// could not be reached) names the server by its name and also has
// "serverName", "summary" (what failed in a few words, as the server's
// state's error_summary says it) and "detail" (the whole error), for a
// client to say the next step its own way; the server's state then has
// "nextRetryAt", when it is next tried. The client returns such errors as
// *APIError.
//
// # Calls
//
// A tool call whose request says Accept: text/event-stream is answered,
// once its checks pass (a refused call is the JSON error it always is),
// with 200 and a stream of server-sent events, each named after its type
// with a CallEvent as its data:
//
//	event: call                {"type":"call","callId":"...","serverId":"...","tool":"..."}
//	event: progress            {"type":"progress","progress":2,"total":5,"message":"..."}   (each progress notification)
//	event: elicitation         {"type":"elicitation","elicitation":{id, serverId, mode, message, requestedSchema|url, callId}}
//	event: elicitation_ended   {"type":"elicitation_ended","id":"..."}   (answered, here or elsewhere, or given up)
//	event: task                {"type":"task","task":Task}   (the server runs the call as a task; its status messages come as progress)
//	event: result              {"type":"result","result":CallToolResult}   (last)
//	event: task_running        {"type":"task_running","status":202,"task":Task}   (last, instead of result: the call's time ran out, the task runs on)
//	event: error               {"type":"error","status":504,"error":{code, message, serverId}}   (last, instead of result)
//
// # Streams
//
// The WebSocket and the SSE stream of an agent send Frame
// ({"type":"cf_agent_mcp_servers","mcp":MCPServersState}) on connect and
// after every change, and ElicitationsFrame
// ({"type":"agentmcp_elicitations","elicitations":[...]}) on connect when
// some are pending and after every change. On the SSE stream each frame is
// one event named after the frame's type; "event: close" ends the stream.
package api

package api

// CodeNoView is the error code of GET .../servers/{id}/view for a tool
// without an MCP Apps view (none named, or its resource holds no
// text/html;profile=mcp-app document).
const CodeNoView = "no_view" // 404

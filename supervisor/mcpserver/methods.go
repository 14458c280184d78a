package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// undeclared holds the methods of the capabilities `subdash mcp` does not
// declare: it offers tools only.
var undeclared = map[string]bool{
	"prompts/list": true, "prompts/get": true, // prompts
	"resources/list": true, "resources/read": true, "resources/templates/list": true, // resources
	"resources/subscribe": true, "resources/unsubscribe": true,
	"completion/complete": true, // completions
}

// toolsOnly answers a request for a method of a capability the server does
// not declare with JSON-RPC's "method not found" (-32601), as the MCP
// specification's capability negotiation has it. The SDK alone would
// answer prompts/list and resources/list with empty lists, which tells a
// client that the server handles prompts without declaring them: what the
// MCP conformance suite's server-stateless scenario fails as
// declares-prompts-in-discover.
func toolsOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if undeclared[method] {
			// The SDK writes the message of every -32601 as
			// `method not found: "<method>"`.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return next(ctx, method, req)
	}
}

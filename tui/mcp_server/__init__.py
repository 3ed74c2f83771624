"""`memdeck mcp`: the store served to agents over the Model Context Protocol.

`agent_session` holds what the tools do, over the store and without the MCP SDK, so it stays
testable and the SDK (about a second to import) is loaded only by `server`, which the
`memdeck mcp` command imports when it starts.
"""

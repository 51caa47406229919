"""The MCP transports: streamable HTTP, stdio, gRPC, and the serving processes."""

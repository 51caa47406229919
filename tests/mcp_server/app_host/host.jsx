// A host page for the evidence app tests: MCP-UI's AppRenderer (@mcp-ui/client, the MCP Apps host
// component from the npm registry) connected to Mnemosyne with the official TypeScript SDK client
// over streamable HTTP, as a chat host renders a tool's UI beside its result. Only the wiring is
// here: which server, token, tool and arguments (from the page's fragment), and a record of what
// the app asked the host to do (links it opened, errors), which the tests read from window.host.
import React from "react";
import { createRoot } from "react-dom/client";
import { AppRenderer } from "@mcp-ui/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const APPS = "io.modelcontextprotocol/ui";
const APP_MIME_TYPE = "text/html;profile=mcp-app";

async function main() {
  const asked = new URLSearchParams(location.hash.slice(1));
  const toolName = asked.get("tool");
  const toolInput = JSON.parse(asked.get("arguments"));
  const host = { opened: [], errors: [], ready: false };
  window.host = host;
  const client = new Client(
    { name: "mcp-ui host", version: "1.0.0" },
    { capabilities: { extensions: { [APPS]: { mimeTypes: [APP_MIME_TYPE] } } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(asked.get("server")), {
    requestInit: { headers: { Authorization: `Bearer ${asked.get("token")}` } },
  });
  await client.connect(transport);
  host.client = client;
  const toolResult = await client.callTool({ name: toolName, arguments: toolInput });
  host.result = toolResult;
  createRoot(document.getElementById("root")).render(
    <AppRenderer
      client={client}
      toolName={toolName}
      sandbox={{ url: new URL(asked.get("sandbox")) }}
      toolInput={toolInput}
      toolResult={toolResult}
      hostContext={{ theme: asked.get("theme") || "light", displayMode: "inline" }}
      onOpenLink={async ({ url }) => {
        host.opened.push(url);
        return {};
      }}
      onError={(error) => host.errors.push(String(error))}
    />,
  );
  host.ready = true;
}

main().catch((error) => {
  window.host = { ...(window.host || {}), failed: String(error) };
});

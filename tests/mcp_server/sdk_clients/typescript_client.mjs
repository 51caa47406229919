// The official TypeScript SDK clients against a running Mnemosyne over streamable HTTP:
// v2 (@modelcontextprotocol/client) negotiating 2026-07-28 ("auto") or pinned to it ("pin"),
// and v1 (@modelcontextprotocol/sdk) on the 2025-11-25 handshake ("v1"). Each lists the tools,
// resources and prompts, calls search (the SDK validates the structured result against the tool's
// output schema) and reads the evidence app's page; prints one JSON line of what it saw, or of
// the error it met.
//   node typescript_client.mjs <auto|pin|v1> <mcp url> <token> <query>
const [mode, url, token, query] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };

async function connect() {
  if (mode === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "ts-sdk-v1", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
    await client.connect(transport);
    return { client, era: "legacy", version: transport.protocolVersion ?? null };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const versionNegotiation = { mode: mode === "pin" ? { pin: "2026-07-28" } : "auto" };
  const client = new Client({ name: "ts-sdk-v2", version: "2.0.0" }, { versionNegotiation });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return { client, era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() ?? null };
}

try {
  const { client, era, version } = await connect();
  const tools = await client.listTools();
  const resources = await client.listResources();
  const templates = await client.listResourceTemplates();
  const prompts = await client.listPrompts();
  const found = await client.callTool({ name: "search", arguments: { query, limit: 5 } });
  const app = await client.readResource({ uri: "ui://mnemosyne/evidence.html" });
  const bad = await client.callTool({ name: "get_chunk", arguments: { chunk_uid: "chk_nowhere00000000" } });
  console.log(
    JSON.stringify({
      era,
      version,
      tools: tools.tools.map((tool) => tool.name),
      search_ui: tools.tools.find((tool) => tool.name === "search")?._meta?.ui ?? null,
      resources: resources.resources.map((resource) => resource.uri),
      templates: templates.resourceTemplates.map((template) => template.uriTemplate),
      prompts: prompts.prompts.map((prompt) => prompt.name),
      search: { isError: Boolean(found.isError), results: found.structuredContent?.results?.length ?? null },
      app: { mimeType: app.contents[0].mimeType, bytes: app.contents[0].text.length },
      bad_uid: { isError: Boolean(bad.isError), text: bad.content?.[0]?.text ?? "" },
    }),
  );
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exitCode = 1;
}

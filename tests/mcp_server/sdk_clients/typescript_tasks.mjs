// The MCP Tasks client (@modelcontextprotocol/ext-tasks) on the TypeScript SDK v2 client, pinned to
// 2026-07-28: upload a PDF with upsert_item (background: true) and follow the task it becomes —
// every status it reports — to the end ("complete"), or cancel it midway, once a worker is on it
// ("cancel"). Prints one JSON line: the execution's kind, the statuses seen and the outcome.
//   node typescript_tasks.mjs <mcp url> <token> <collection uid> <pdf file> <complete|cancel>
// ext-tasks needs, for a 2026-07-28 server, a raw request path (`rawDispatch`) and the request
// framing the SDK client does not expose; both are given here as its documentation says.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const [url, token, collectionUid, file, mode] = process.argv.slice(2);
const VERSION = "2026-07-28";
const clientInfo = { name: "ext-tasks-client", version: "1.0.0" };
const clientCapabilities = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const authorization = { Authorization: `Bearer ${token}` };

let nextId = 1;

// The host's request path: ext-tasks hands over the method and params; the id is the host's.
async function rawDispatch(request, options) {
  const headers = {
    ...authorization,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": request.method,
  };
  if (request.method === "tools/call") headers["Mcp-Name"] = request.params.name;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: `raw-${nextId++}`, ...request }), signal: options?.signal });
  const text = await response.text();
  if ((response.headers.get("content-type") || "").startsWith("text/event-stream")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim());
    return JSON.parse(data[data.length - 1]);
  }
  return JSON.parse(text);
}

const seen = [];
try {
  const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: { pin: VERSION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: authorization } }));
  const session = createTaskSessionFromClient(client, {
    endpointId: url,
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
  });
  const execution = await session.callTool("upsert_item", {
    collection_uid: collectionUid,
    title: basename(file),
    content_base64: readFileSync(file).toString("base64"),
    mime_type: "application/pdf",
    background: true,
  });
  let cancelled = false;
  const { outcome } = await execution.settle({
    onEvent: async (event) => {
      if (event.type !== "task") return;
      seen.push({ status: event.task.status, message: event.task.statusMessage ?? "" });
      const running = event.task.status === "working" && !/waiting/.test(event.task.statusMessage ?? "waiting");
      if (mode === "cancel" && !cancelled && running) {
        cancelled = true;
        await execution.cancel();
      }
    },
  });
  const result = outcome.status === "completed" ? outcome.result : null;
  console.log(
    JSON.stringify({
      kind: execution.kind,
      taskId: execution.handle?.taskId ?? null,
      seen,
      outcome: outcome.status,
      structured: result?.structuredContent ?? null,
      error: outcome.status === "failed" ? String(outcome.error?.message ?? outcome.error) : null,
    }),
  );
  await session.close();
} catch (error) {
  console.log(JSON.stringify({ seen, error: String(error?.stack ?? error) }));
  process.exitCode = 1;
}

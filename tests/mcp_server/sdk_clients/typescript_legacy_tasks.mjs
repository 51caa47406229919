// The official TypeScript SDK v1 client (@modelcontextprotocol/sdk) on 2025-11-25, with that
// revision's task API (client.experimental.tasks): upload a PDF with upsert_item as a task and
// follow it — every status the stream reports — to its result ("complete"), or cancel it once a
// worker is on it ("cancel"); then list the caller's tasks. Prints one JSON line of what it saw.
//   node typescript_legacy_tasks.mjs <mcp url> <token> <collection uid> <pdf file> <complete|cancel>
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, collectionUid, file, mode] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };

const seen = [];
try {
  const client = new Client({ name: "ts-sdk-v1-tasks", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  const capability = client.getServerCapabilities()?.tasks ?? null;
  // The client learns which tools run as tasks from the listing (execution.taskSupport).
  await client.listTools();
  const stream = client.experimental.tasks.callToolStream({
    name: "upsert_item",
    arguments: {
      collection_uid: collectionUid,
      title: basename(file),
      content_base64: readFileSync(file).toString("base64"),
      mime_type: "application/pdf",
    },
  });
  let taskId = null;
  let outcome = null;
  let structured = null;
  let error = null;
  let cancelled = false;
  for await (const message of stream) {
    if (message.type === "taskCreated") taskId = message.task.taskId;
    if (message.type === "taskStatus") {
      seen.push({ status: message.task.status, message: message.task.statusMessage ?? "" });
      const running = message.task.status === "working" && !/waiting/.test(message.task.statusMessage ?? "waiting");
      if (mode === "cancel" && !cancelled && running) {
        cancelled = true;
        const answer = await client.experimental.tasks.cancelTask(taskId);
        seen.push({ status: `cancel answered ${answer.status}`, message: answer.statusMessage ?? "" });
      }
    }
    if (message.type === "result") {
      outcome = "completed";
      structured = message.result.structuredContent ?? null;
    }
    if (message.type === "error") {
      outcome = "error";
      error = String(message.error?.message ?? message.error);
    }
  }
  const final = taskId ? await client.experimental.tasks.getTask(taskId) : null;
  const listed = await client.experimental.tasks.listTasks();
  console.log(
    JSON.stringify({
      version: transport.protocolVersion ?? null,
      capability,
      taskId,
      seen,
      outcome,
      finalStatus: final?.status ?? null,
      structured,
      error,
      listed: listed.tasks.map((task) => task.taskId),
    }),
  );
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ seen, error: String(error?.stack ?? error) }));
  process.exitCode = 1;
}

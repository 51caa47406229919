// The TypeScript SDK v2 client, pinned to 2026-07-28, deleting an item when the server asks the
// person first: its elicitation handler answers as the person would ("yes" or "no"), and the
// client sends the call again with the answer by itself. Prints one JSON line: the question it was
// asked and the call's final result.
//   node typescript_confirm.mjs <mcp url> <token> <item uid> <yes|no>
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, itemUid, answer] = process.argv.slice(2);
const asked = [];
const client = new Client(
  { name: "ts-sdk-v2-confirm", version: "2.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params.message);
  return answer === "yes" ? { action: "accept", content: { delete: true } } : { action: "decline" };
});
try {
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  const result = await client.callTool({ name: "delete_item", arguments: { item_uid: itemUid, dry_run: false } });
  console.log(JSON.stringify({ asked, isError: Boolean(result.isError), text: result.content?.[0]?.text ?? "", deleted: result.structuredContent?.deleted ?? null }));
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ asked, error: String(error?.message ?? error) }));
  process.exitCode = 1;
}

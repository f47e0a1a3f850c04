import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";

/**
 * How a service may differ from what the adapter assumes (docs/upstream-assumptions.md), each the
 * way a real service would: what `check` must report.
 */
export interface Deviations {
  /** The create body must name the interaction mode in this field: without it, FastAPI's 422 `missing` (start the workspace behind with the same `modeField`). */
  requireField?: string;
  /** `GET /queries` lists oldest first (over every page, with cursors of its own). */
  oldestFirst?: boolean;
  /** Steps come as `{kind: "message", body}` and `{kind: "action", action: {function}}`, shapes the adapter does not read. */
  unknownSteps?: boolean;
  /** Every answer waits this long first. */
  delayMs?: number;
}

/** A running deviating service. */
export interface DeviatingUpstream {
  url: string;
  close(): Promise<void>;
}

/**
 * A test upstream that deviates (docs/check.md#in-the-test-suite): a loopback pass-through in front of the
 * embedded workspace (`target`) that changes what the deviations say and nothing else. Its
 * queries' realtime channels stay the embedded workspace's own.
 */
export async function startDeviatingUpstream(target: string, deviations: Deviations): Promise<DeviatingUpstream> {
  const dispatcher = new Agent({ connections: 16 });
  const call = async (method: string, path: string, headers: IncomingMessage["headers"], body: Buffer | null) => {
    const { host: _host, connection: _connection, "content-length": _length, ...passed } = headers;
    const answer = await request(`${target}${path}`, { method: method as "GET", headers: passed as Record<string, string>, body, dispatcher });
    return { status: answer.statusCode, text: await answer.body.text() };
  };
  const send = (outgoing: ServerResponse, status: number, body: unknown) =>
    outgoing.writeHead(status, { "content-type": "application/json" }).end(typeof body === "string" ? body : JSON.stringify(body));

  async function answer(incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse): Promise<void> {
    if (deviations.delayMs) await new Promise((resolve) => setTimeout(resolve, deviations.delayMs));
    const url = new URL(incoming.url ?? "/", "http://upstream");
    const method = incoming.method ?? "GET";
    if (method === "POST" && url.pathname === "/queries" && deviations.requireField) {
      const parsed = JSON.parse(body.toString("utf8") || "{}") as Record<string, unknown>;
      if (!(deviations.requireField in parsed)) {
        send(outgoing, 422, { detail: [{ loc: ["body", deviations.requireField], msg: "Field required", type: "missing", input: parsed }] });
        return;
      }
    }
    if (method === "GET" && url.pathname === "/queries" && deviations.oldestFirst) {
      await listOldestFirst(incoming, url, outgoing);
      return;
    }
    const forwarded = await call(method, `${url.pathname}${url.search}`, incoming.headers, body.length > 0 ? body : null);
    if (deviations.unknownSteps && url.pathname === "/queries" && forwarded.status === 200) {
      send(outgoing, 200, rewriteSteps(JSON.parse(forwarded.text)));
      return;
    }
    send(outgoing, forwarded.status, forwarded.text);
  }

  /** Every page of the workspace's list, newest first as the workspace has it, served back reversed. */
  async function listOldestFirst(incoming: IncomingMessage, url: URL, outgoing: ServerResponse): Promise<void> {
    const items: unknown[] = [];
    for (let cursor: string | null = null, pages = 0; pages < 50; pages += 1) {
      const page = await call("GET", `/queries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, incoming.headers, null);
      if (page.status !== 200) {
        send(outgoing, page.status, page.text);
        return;
      }
      const parsed = JSON.parse(page.text) as { data: unknown[]; next_cursor: string | null };
      items.push(...parsed.data);
      cursor = parsed.next_cursor;
      if (!cursor) break;
    }
    items.reverse();
    const limit = Number(url.searchParams.get("limit") ?? 20);
    const cursor = url.searchParams.get("cursor");
    const start = cursor ? Number(Buffer.from(cursor, "base64url").toString("utf8")) : 0;
    const end = start + limit;
    const next = end < items.length ? Buffer.from(String(end)).toString("base64url") : null;
    const data = deviations.unknownSteps ? (rewriteSteps({ data: items.slice(start, end) }) as { data: unknown[] }).data : items.slice(start, end);
    send(outgoing, 200, { data, next_cursor: next, has_more: next !== null });
  }

  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      answer(incoming, Buffer.concat(chunks), outgoing).catch(() => outgoing.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}

/** The steps of a query object or of a list page's items, in shapes the adapter does not read. */
function rewriteSteps(body: unknown): unknown {
  const rewrite = (query: Record<string, unknown>) => ({
    ...query,
    steps: Array.isArray(query.steps)
      ? query.steps.map((step: Record<string, unknown>) => ("tool" in step ? { kind: "action", action: { function: step.tool } } : { kind: "message", body: step.text }))
      : query.steps,
  });
  const record = body as Record<string, unknown>;
  if (Array.isArray(record.data)) return { ...record, data: record.data.map((item) => rewrite(item as Record<string, unknown>)) };
  return rewrite(record);
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md#the-audit-trail: AUDIT_LOG=otlp sends each record as an OpenTelemetry log record
// to the standard OTLP logs endpoint; a loopback receiver stands in for the collector.
interface LogRecord {
  eventName?: string;
  body?: { stringValue?: string };
  attributes?: { key: string; value: Record<string, unknown> }[];
}

describe("the audit trail over OTLP", () => {
  const received: { path: string; contentType: string; records: LogRecord[] }[] = [];
  let receiver: Server;
  let stack: Stack;
  const before = process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        const parsed = JSON.parse(body) as { resourceLogs: { scopeLogs: { logRecords: LogRecord[] }[] }[] };
        const records = parsed.resourceLogs.flatMap((resource) => resource.scopeLogs.flatMap((scope) => scope.logRecords));
        received.push({ path: request.url ?? "", contentType: request.headers["content-type"] ?? "", records });
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    // The exporter reads the standard variable, as it would in a deployment.
    process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/logs`;
    stack = await startStack({ AUDIT_LOG: "otlp", ADAPTER_API_KEYS: `team-search=${API_KEY}` });
  });
  afterAll(async () => {
    await stack?.close();
    await new Promise((resolve) => receiver.close(resolve));
    if (before === undefined) delete process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT = before;
  });

  it("sends one log record per answer, its fields as attributes and the record as its body, with no key and no text", async () => {
    const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("How much annual leave do I get?")) });
    expect(response.status).toBe(200);
    const [record] = await waitFor(() => {
      const records = received.flatMap((request) => request.records);
      return records.length > 0 ? records : undefined;
    }, "the audit record at the OTLP receiver");
    expect(received[0]).toMatchObject({ path: "/v1/logs", contentType: "application/json" });
    expect(record?.eventName).toBe("adapter.audit");
    const body = JSON.parse(record?.body?.stringValue ?? "{}") as Record<string, unknown>;
    expect(body).toMatchObject({ key: "team-search", workspace: "acme", mode: "ask", dialect: "chat.completions", status: 200, completed: true });
    const attributes = Object.fromEntries((record?.attributes ?? []).map((attribute) => [attribute.key, Object.values(attribute.value)[0]]));
    expect(attributes).toMatchObject({ "adapter.audit.key": "team-search", "adapter.audit.workspace": "acme", "adapter.audit.completed": true });
    expect(Number(attributes["adapter.audit.tokens.input"])).toBeGreaterThan(0);
    const everything = JSON.stringify(received);
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toMatch(/annual leave/);
  });
});

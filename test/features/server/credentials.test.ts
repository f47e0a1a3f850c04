import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../../src/util/package-info.js";
import { exchange } from "../../helpers/exchange.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../helpers/otlp-receiver.js";
import { type RecordingProxy, startRecordingProxy } from "../../helpers/recording-proxy.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// The credentials the adapter is given, as a process of its own in front of a real upstream (the
// embedded workspace on its own port, behind a proxy that records what reaches it): an admin's key
// never answers nor goes upstream (docs/governance.md#usage), a URL's credentials are never printed
// (docs/operating.md#credentials-in-urls), a key list that could be misread stops start-up
// (docs/governance.md#named-keys).

const ADMIN_KEY = "sk-admin-CANARY-5e1f";
const URL_PASSWORD = "sk-CANARY-URLPW";
const json = { "content-type": "application/json", "service-workspace": "acme" };
const chat = JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });

describe("an adapter in front of a real workspace, with only ADMIN_API_KEYS listed (pass-through)", () => {
  let workspace: RunningWorkspace;
  let proxy: RecordingProxy;
  let adapter: Replica;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // The workspace would accept the admin's key: what keeps it from answering is the adapter alone.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY, ADMIN_KEY], stepDelayMs: 0 });
    proxy = await startRecordingProxy(workspace.url);
    const upstream = new URL(proxy.url);
    upstream.username = "user";
    upstream.password = URL_PASSWORD;
    adapter = await startReplica(upstream.href, {
      ADMIN_API_KEYS: `ops=${ADMIN_KEY}`,
      LOG_LEVEL: "info",
      MCP_TASKS: "off",
      // Traced: the upstream calls' spans carry their URL (`url.full`).
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
  }, 60_000);
  afterAll(async () => {
    await stopAll(adapter ? [adapter] : []);
    await proxy?.close();
    await workspace?.close();
    await receiver?.close();
  });

  it("prints the upstream's address without its credentials, and says they are not used", async () => {
    // The log is written as it comes (pino), the banner at once: wait for the line.
    const log = await waitFor(() => (adapter.output().includes("adapter listening") ? adapter.output() : undefined), "the start-up log line");
    expect(log).not.toContain(URL_PASSWORD);
    expect(log).toMatch(/"upstream":"http:\/\/REDACTED:REDACTED@127\.0\.0\.1:\d+\/?"/);
    expect(log).toContain("WORKSPACE_BASE_URL carries credentials");
  });

  it("refuses the admin's key with a 403 at every answer route, and never sends it upstream", async () => {
    const admin = { ...json, authorization: `Bearer ${ADMIN_KEY}`, accept: "application/json, text/event-stream" };
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const calls: [method: string, path: string, body?: string][] = [
      ["POST", "/v1/chat/completions", chat],
      ["POST", "/v1/chat/completions", JSON.stringify({ ...JSON.parse(chat), stream: true })],
      ["POST", "/v1/responses", JSON.stringify({ model: "ask", input: "How much annual leave do employees get?" })],
      ["GET", "/v1/responses/resp_0123456789abcdef0123456789abcdef"],
      ["GET", "/v1/models"],
      ["POST", "/v1/conversations", "{}"],
      ["POST", "/mcp", JSON.stringify(initialize)],
      ["POST", "/mcp/acme", JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "ask", arguments: { question: "annual leave?" } } })],
    ];
    for (const [method, path, body] of calls) {
      const answer = await exchange(`${adapter.url}${path}`, { method, headers: admin, ...(body === undefined ? {} : { body }) });
      expect([method, path, answer.status]).toEqual([method, path, 403]);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "key_not_for_answers", type: "permission_error" } });
      expect(answer.body).not.toContain(ADMIN_KEY);
    }
    // It still reads usage, what it is for; and a workspace key still answers, and is what went upstream.
    const usage = await exchange(`${adapter.url}/v1/organization/usage/completions?start_time=0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(usage.status).toBe(200);
    expect((await exchange(`${adapter.url}/v1/chat/completions`, { headers: { ...json, authorization: `Bearer ${API_KEY}` }, body: chat })).status).toBe(200);
    expect(proxy.requests.length).toBeGreaterThan(0);
    expect(proxy.requests.some((request) => request.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(proxy.requests.filter((request) => JSON.stringify(request.headers).includes(ADMIN_KEY))).toEqual([]);
    expect(adapter.output()).not.toContain(ADMIN_KEY);
  });

  it("records the upstream calls' URLs in spans without the credentials", async () => {
    const spans = await receiver.waitFor((received) => received.some((span) => span.kind === "client" && typeof span.attributes["url.full"] === "string"));
    const urls = spans.map((span) => span.attributes["url.full"]).filter((url): url is string => typeof url === "string");
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url).toMatch(/^http:\/\/REDACTED:REDACTED@127\.0\.0\.1:\d+\//);
    expect(JSON.stringify(receiver.spans(), (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(URL_PASSWORD);
  });

  it("leaves the Host to the reverse proxy in front: a real workspace's deployment answers any", async () => {
    const answer = await exchange(`${adapter.url}/v1/models`, { headers: { ...json, host: "adapter.internal.example", authorization: `Bearer ${API_KEY}` } });
    expect(answer.status).toBe(200);
  });
});

describe("a key list that could be misread", () => {
  it("stops start-up (exit 2) naming the variable and the entry, quoting neither the name nor the key", async () => {
    const run = promisify(execFile);
    const started = run(process.execPath, ["dist/src/main.js"], {
      cwd: projectRoot(),
      env: { ...process.env, PORT: "0", WORKSPACE_BASE_URL: "", ADAPTER_API_KEYS: "team-a=sk-fine-key, sk-CANARY-MID=tail42" },
    });
    const failed = (await started.then(() => undefined, (error: unknown) => error)) as { code: number; stderr: string; stdout: string };
    expect(failed?.code).toBe(2);
    expect(failed.stderr).toMatch(/ADAPTER_API_KEYS: entry 2: what comes before '=' looks like a key, not a name/);
    expect(`${failed.stderr}${failed.stdout}`).not.toMatch(/CANARY|tail42|sk-fine-key/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchange } from "../../helpers/exchange.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";

// docs/operating.md#a-local-workspace-stays-local: `npm start` with the embedded workspace, as a
// process of its own, read through DNS rebinding as the security review did it (a page on
// attacker.example whose name then resolves to 127.0.0.1: the browser sends the attacker's Host and
// Origin, and any bearer key, which the embedded workspace accepts).

const QUESTION = JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
const json = { "content-type": "application/json" };
/** The local set-up's environment: the embedded workspace on the fixture documents, answering at once. */
const LOCAL = { EMBEDDED_DOCUMENTS_DIR: FIXTURE_DOCUMENTS, EMBEDDED_STEP_DELAY_MS: "0", LOG_LEVEL: "warn" };

describe("npm start with the embedded workspace stays local", () => {
  const replicas: Replica[] = [];
  let open: Replica;
  let port: string;

  beforeAll(async () => {
    // WORKSPACE_BASE_URL empty: the embedded workspace, as `npm start` runs it.
    open = await startReplica("", { ...LOCAL, ALLOWED_HOSTS: "adapter.intranet.example" });
    replicas.push(open);
    port = new URL(open.url).port;
  }, 60_000);
  afterAll(() => stopAll(replicas));

  it("refuses a rebinding Host (421) on the answer, document, model and page routes: no document text leaves", async () => {
    const rebound = { host: `attacker.example:${port}`, origin: `http://attacker.example:${port}`, authorization: "Bearer anything" };
    for (const [path, body] of [["/v1/chat/completions", QUESTION], ["/documents/demo/handbook.md", undefined], ["/v1/models", undefined], ["/", undefined]] as const) {
      const answer = await exchange(`${open.url}${path}`, { headers: { ...json, ...rebound }, ...(body === undefined ? {} : { body }) });
      expect([path, answer.status]).toEqual([path, 421]);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "host_not_allowed", type: "invalid_request_error" } });
      expect(answer.body).not.toMatch(/annual leave|25 days/i);
    }
    // Without the Origin (a same-origin GET, as a browser sends it), the Host alone refuses it.
    expect((await exchange(`${open.url}/documents/demo/handbook.md`, { headers: { host: `attacker.example:${port}` } })).status).toBe(421);
    // The probes answer on any Host: they say nothing but "up".
    expect((await exchange(`${open.url}/health`, { headers: { host: `attacker.example:${port}` } })).status).toBe(200);
  });

  it("answers loopback names on any port, and the hosts of ALLOWED_HOSTS", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "app.localhost:3000", `127.1.2.3:${port}`, `[::1]:${port}`, "adapter.intranet.example"]) {
      const answer = await exchange(`${open.url}/v1/models`, { headers: { host, authorization: "Bearer anything" } });
      expect([host, answer.status]).toEqual([host, 200]);
    }
  });

  it("refuses a foreign browser Origin on /v1 and /documents (as /mcp does), and accepts the adapter's own pages", async () => {
    const foreign = { origin: "http://attacker.example", authorization: "Bearer anything" };
    const chat = await exchange(`${open.url}/v1/chat/completions`, { headers: { ...json, ...foreign }, body: QUESTION });
    expect([chat.status, JSON.parse(chat.body).error.code]).toEqual([403, "origin_not_allowed"]);
    const page = await exchange(`${open.url}/documents/demo/handbook.md`, { headers: foreign });
    expect([page.status, JSON.parse(page.body).error.code]).toEqual([403, "origin_not_allowed"]);
    expect(page.body).not.toMatch(/annual leave/i);
    const own = { origin: open.url, authorization: "Bearer anything" };
    expect((await exchange(`${open.url}/v1/chat/completions`, { headers: { ...json, ...own }, body: QUESTION })).status).toBe(200);
    expect((await exchange(`${open.url}/documents/demo/handbook.md`, { headers: own })).status).toBe(200);
  });

  describe("with client keys listed", () => {
    let listed: Replica;

    beforeAll(async () => {
      listed = await startReplica("", { ...LOCAL, ADAPTER_API_KEYS: "team-local=sk-local-key-1, c2stYWI==" });
      replicas.push(listed);
    }, 60_000);

    it("asks for a listed key at /documents: none, or another, is a 401", async () => {
      for (const headers of [{}, { authorization: "Bearer sk-not-listed" }] as Record<string, string>[]) {
        const refused = await exchange(`${listed.url}/documents/demo/handbook.md`, { headers });
        expect(refused.status).toBe(401);
        expect(refused.body).not.toMatch(/annual leave/i);
      }
      // A Base64 key with its padding is a key (not a name and an empty key).
      for (const key of ["sk-local-key-1", "c2stYWI=="]) {
        expect((await exchange(`${listed.url}/documents/demo/handbook.md`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      }
    });

    it("opens an answer's source link in a browser without a key (it is signed), and that document only", async () => {
      const answered = await exchange(`${listed.url}/v1/chat/completions`, { headers: { ...json, authorization: "Bearer sk-local-key-1" }, body: QUESTION });
      expect(answered.status).toBe(200);
      const link = new URL(JSON.parse(answered.body).choices[0].message.annotations[0].url_citation.url);
      expect(link.pathname).toBe("/documents/demo/handbook.md");
      expect(link.searchParams.get("sig")).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const opened = await exchange(link.href);
      expect(opened.status).toBe(200);
      expect(opened.body).toMatch(/<title>handbook\.md<\/title>/);
      // The signature is the link's own: another document, or a changed signature, is refused.
      const other = new URL(link.href);
      other.pathname = "/documents/demo/security-policy.md";
      expect((await exchange(other.href)).status).toBe(401);
      const forged = new URL(link.href);
      const sig = link.searchParams.get("sig") ?? "";
      forged.searchParams.set("sig", `${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}`);
      expect((await exchange(forged.href)).status).toBe(401);
    });

    it("signs a Responses answer's url_citation links too, in the answer and in its replayed stream", async () => {
      const headers = { ...json, authorization: "Bearer sk-local-key-1" };
      const answered = await exchange(`${listed.url}/v1/responses`, { headers, body: JSON.stringify({ model: "ask", input: "How much annual leave do employees get?" }) });
      expect(answered.status).toBe(200);
      const response = JSON.parse(answered.body);
      const annotation = response.output.find((item: { type: string }) => item.type === "message").content[0].annotations[0];
      expect(annotation.type).toBe("url_citation");
      const link = new URL(annotation.url);
      expect(link.searchParams.get("sig")).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect((await exchange(link.href)).status).toBe(200);
      const replayed = await exchange(`${listed.url}/v1/responses/${response.id}?stream=true`, { headers: { authorization: "Bearer sk-local-key-1" } });
      const events = replayed.body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
      const added = events.find((event) => event.type === "response.output_text.annotation.added");
      const replayedUrl = new URL(added.annotation.url);
      expect((await exchange(replayedUrl.href)).status).toBe(200);
    });
  });
});

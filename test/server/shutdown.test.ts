import request from "supertest";
import { describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { parseSse } from "../helpers/read-sse.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, startAdapter } from "../helpers/start-stack.js";

describe("graceful shutdown", () => {
  it("lets short requests finish, ends open streams with an error frame after the grace time, and closes", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 20 });
    const adapter = await startAdapter(workspace.url, { SHUTDOWN_GRACE_MS: "400", DEFAULT_WORKSPACE: "acme" });
    try {
      const stalled = await fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(chatBody("leave [fault:stall]", { stream: true })),
      });
      const streamBody = new Uint8Array(0);
      const reading = (async () => {
        const chunks: Uint8Array[] = [streamBody];
        for await (const chunk of stalled.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
        return new TextDecoder().decode(Buffer.concat(chunks));
      })();
      const short = fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(chatBody("leave policy")),
      });
      await new Promise((resolve) => setTimeout(resolve, 30));

      const started = performance.now();
      const stopping = adapter.shutdown();
      // Draining: readiness is 503 and new requests are refused, liveness still answers.
      expect(adapter.adapter.lifecycle.isDraining).toBe(true);
      expect((await request(adapter.adapter.app).get("/ready")).status).toBe(503);
      const refused = await request(adapter.adapter.app).post("/v1/chat/completions").set(headers()).send(chatBody("hi"));
      expect(refused.status).toBe(503);
      expect(refused.body.error.type).toBe("service_unavailable");
      expect((await request(adapter.adapter.app).get("/health")).status).toBe(200);

      expect((await short).status).toBe(200);
      const text = await reading;
      await stopping;
      expect(performance.now() - started).toBeGreaterThanOrEqual(380);
      const events = parseSse(new TextEncoder().encode(text)).map((event) => event.data);
      expect(events.at(-1)).toBe("[DONE]");
      expect(JSON.parse(events.at(-2) as string).error).toMatchObject({ type: "service_unavailable" });
      expect(adapter.server.listening).toBe(false);
    } finally {
      await adapter.close().catch(() => undefined);
      await workspace.close();
    }
  });

  it("finishes at once when nothing is in flight", async () => {
    const adapter = await startAdapter("http://127.0.0.1:1", { SHUTDOWN_GRACE_MS: "5000" });
    const started = performance.now();
    await adapter.shutdown();
    expect(performance.now() - started).toBeLessThan(500);
  });
});

import request from "supertest";
import { describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { parseSse } from "../../helpers/read-sse.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

describe("graceful shutdown", () => {
  it("lets short requests finish, ends open streams with an error frame after the grace time, and closes", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 20 });
    // A grace time of 2 s: the short answer (a few hundred milliseconds) ends within it on a busy machine too.
    const adapter = await startAdapter(workspace.url, { SHUTDOWN_GRACE_MS: "2000", DEFAULT_WORKSPACE: "acme" });
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
      // Shut down once the short request is in flight (its query created), however busy the machine.
      await waitFor(() => workspace.control.calls.create >= 2, "the short request's query created");

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
      // The stream was ended by the grace time, not before (a lower bound: a busy machine only adds).
      expect(performance.now() - started).toBeGreaterThanOrEqual(1980);
      const events = parseSse(new TextEncoder().encode(text)).map((event) => event.data);
      expect(events.at(-1)).toBe("[DONE]");
      expect(JSON.parse(events.at(-2) as string).error).toMatchObject({ type: "service_unavailable" });
      expect(adapter.server.listening).toBe(false);
    } finally {
      await adapter.close().catch(() => undefined);
      await workspace.close();
    }
  });

  it("over the network, as Kubernetes' probes and load balancers see it: readiness 503 at once, liveness 200, new answers 503 with Connection: close, until the last answer ends; then the port closes", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 20 });
    // A grace time of a minute: a drain that ends within the test's time ended with its last answer.
    const adapter = await startAdapter(workspace.url, { SHUTDOWN_GRACE_MS: "60000", DEFAULT_WORKSPACE: "acme" });
    try {
      expect((await fetch(`${adapter.url}/ready`)).status).toBe(200);
      const controller = new AbortController();
      const stream = await fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(chatBody("leave [fault:stall]", { stream: true })),
        signal: controller.signal,
      });
      const reading = (async () => {
        try {
          for await (const _chunk of stream.body as unknown as AsyncIterable<Uint8Array>);
        } catch {
          // aborted below
        }
      })();
      let stopped = false;
      const stopping = adapter.shutdown().then(() => (stopped = true));
      // At once: while the drain still waits for the stream.
      const ready = await fetch(`${adapter.url}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: "draining" });
      expect(stopped).toBe(false);
      expect((await fetch(`${adapter.url}/health`)).status).toBe(200);
      const refused = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("hi")) });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("connection")).toBe("close");
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(adapter.server.listening).toBe(true);
      // The answer in flight ends (its client leaves): the drain is over, the port closes.
      controller.abort();
      await reading;
      await stopping;
      expect(adapter.server.listening).toBe(false);
      await expect(fetch(`${adapter.url}/health`)).rejects.toThrow();
    } finally {
      await adapter.close().catch(() => undefined);
      await workspace.close();
    }
  });

  it("finishes at once when nothing is in flight", async () => {
    // A grace time of a minute: finishing within the test's time is not waiting for it.
    const adapter = await startAdapter("http://127.0.0.1:1", { SHUTDOWN_GRACE_MS: "60000" });
    await adapter.shutdown();
    expect(adapter.server.listening).toBe(false);
  });
});

describe("two adapters in one process", () => {
  it("closes once however often it is asked, overlapping or not (a shutdown and a caller's own close)", async () => {
    const adapter = await startAdapter("http://127.0.0.1:1", {});
    await adapter.shutdown();
    await expect(Promise.all([adapter.adapter.close(), adapter.adapter.close(), adapter.close()])).resolves.toEqual([undefined, undefined, undefined]);
  });

  it("share nothing: one shutting down ends its own streams only, and each beats its own keep-alives", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 20 });
    const first = await startAdapter(workspace.url, { SHUTDOWN_GRACE_MS: "0", DEFAULT_WORKSPACE: "acme", SSE_KEEPALIVE_MS: "20" });
    const second = await startAdapter(workspace.url, { DEFAULT_WORKSPACE: "acme", SSE_KEEPALIVE_MS: "20" });
    const open = async (url: string) => {
      const controller = new AbortController();
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: headers(),
        body: JSON.stringify(chatBody("leave [fault:stall]", { stream: true })),
        signal: controller.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      const done = (async () => {
        try {
          for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
        } catch {
          // aborted below
        }
      })();
      return { text: () => text, done, abort: () => controller.abort() };
    };
    try {
      const mine = await open(first.url);
      const theirs = await open(second.url);
      await waitFor(() => first.adapter.lifecycle.openStreams === 1 && second.adapter.lifecycle.openStreams === 1, "both streams open");
      await first.shutdown();
      await mine.done;
      expect(mine.text()).toContain("service_unavailable");
      expect(second.adapter.lifecycle.openStreams).toBe(1);
      const before = theirs.text().split(": keep-alive").length;
      await waitFor(() => theirs.text().split(": keep-alive").length > before, "the other adapter's next keep-alive");
      expect(theirs.text()).not.toContain("service_unavailable");
      theirs.abort();
      await theirs.done;
    } finally {
      await first.close().catch(() => undefined);
      await second.close();
      await workspace.close();
    }
  });
});

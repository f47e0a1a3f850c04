import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import type { Tracing } from "../../../src/telemetry/tracing.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { localTracing } from "../../helpers/local-tracing.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../helpers/otlp-receiver.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// docs/observability.md: the lease holder's poll is one short trace; the replicas it serves
// record what they received in that trace, linked to their own answers.

describeWith(REDIS, "tracing shared polling across replicas", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let receiver: OtlpReceiver;
  const replicas: { adapter: RunningAdapter; tracing: Tracing }[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    // Queries take about a second: both replicas wait through several polls.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: ["sk-test-key"], stepDelayMs: 100 });
    receiver = await startOtlpReceiver();
    const prefix = `trace-test-${Date.now()}:`;
    for (let index = 0; index < 2; index += 1) {
      const { tracing } = localTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      const environment = {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: prefix,
        REALTIME: "off",
        POLL_INTERVAL_MIN_MS: "50",
        POLL_INTERVAL_MAX_MS: "50",
      };
      replicas.push({ adapter: await startAdapter(workspace.url, environment, pino({ level: "silent" }), { tracing }), tracing });
    }
  });
  afterAll(async () => {
    for (const { adapter, tracing } of replicas) {
      await adapter.close();
      await tracing.shutdown();
    }
    await receiver?.close();
    await workspace?.close();
    await redis?.stop();
  });

  it("links the holder's poll to its own answers, and records each receiving replica's part in the holder's poll trace", async () => {
    const traces = ["a", "b"].map((digit) => digit.repeat(32));
    const responses = await Promise.all(
      replicas.map(({ adapter }, index) =>
        fetch(`${adapter.url}/v1/chat/completions`, {
          method: "POST",
          headers: headers({ traceparent: `00-${traces[index]}-b7ad6b7169203331-01` }),
          body: JSON.stringify(chatBody("How many vacation days do employees get?")),
        }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    await Promise.all(responses.map((response) => response.text()));
    await Promise.all(replicas.map(({ tracing }) => tracing.flush()));
    const spans = await receiver.waitFor((all) => traces.every((trace) => all.some((span) => span.traceId === trace && span.kind === "server")));
    const answers = traces.map((trace) => spans.find((span) => span.traceId === trace && span.name === "chat ask") as ReceivedSpan);

    const received = spans.filter((span) => span.name === "receive polled queries");
    expect(received.length).toBeGreaterThan(0);
    for (const span of received) {
      expect(span.kind).toBe("consumer");
      // A child of the holder's poll span: the poll's trace, exported by the other replica.
      const poll = spans.find((candidate) => candidate.spanId === span.parentSpanId) as ReceivedSpan;
      expect(poll.name).toBe("poll queries");
      expect(poll.traceId).toBe(span.traceId);
      expect(poll.resource["service.instance.id"]).not.toBe(span.resource["service.instance.id"]);
    }
    // The receiving replica's answer is linked from what it received; the holder's own answer from its poll.
    const linked = (span: ReceivedSpan, answer: ReceivedSpan) => span.links.some((link) => link.spanId === answer.spanId);
    const receiverAnswer = answers.find((answer) => received.some((span) => linked(span, answer))) as ReceivedSpan;
    const holderAnswer = answers.find((answer) => answer !== receiverAnswer) as ReceivedSpan;
    expect(receiverAnswer).toBeDefined();
    const holderPolls = spans.filter((span) => span.name === "poll queries" && linked(span, holderAnswer));
    expect(holderPolls.length).toBeGreaterThan(0);
    expect(holderPolls.some((poll) => (poll.attributes["workspace_adapter.poll.others_waiting"] as number) > 0)).toBe(true);
  });
});

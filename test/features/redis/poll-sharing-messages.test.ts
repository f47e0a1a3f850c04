import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type Replica, type ReplicasOnRedis, replicasOnRedis } from "../../helpers/replica-process.js";
import { headers } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// The poll sharing's channel (docs/upstream-assumptions.md#polling) carries what other replicas
// publish, and anything else anyone publishes there (issue 56, code review §2.4 #7): a message is
// parsed, never cast. `null`, text that is not JSON and objects of the wrong shape are ignored and
// logged; the replica keeps serving, and its answer in progress ends as it should.

describeWith(REDIS, "messages on the poll sharing channel that do not parse", () => {
  let started: ReplicasOnRedis;
  const prefix = `poll-messages-${process.pid}:`;

  beforeAll(async () => {
    // Slow steps: the answer is still being polled for while the test publishes.
    started = await replicasOnRedis(1, 300, (url) => ({ REDIS_URL: url, REDIS_KEY_PREFIX: prefix, REALTIME: "off", POLL_INTERVAL_MIN_MS: "20", POLL_INTERVAL_MAX_MS: "100" }));
  }, 60_000);
  afterAll(() => started?.stop());

  it("ignores null, garbage and wrong shapes (logged), and keeps answering", async () => {
    const { redis } = started;
    const [replica] = started.replicas as [Replica];
    let output = "";
    replica.child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const asked = fetch(`${replica.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ model: "reason", messages: [{ role: "user", content: "How are security incidents reported?" }] }),
    });
    let channels: string[] = [];
    await waitFor(async () => (channels = (await redis.client.pubsub("CHANNELS", `${prefix}*`)) as string[]).length > 0, "the replica listening on its group's channel");
    const [channel] = channels as [string];
    for (const text of ["null", "not json", "42", "[]", JSON.stringify({ from: 7 }), JSON.stringify({ from: "another", items: "none" }), JSON.stringify({ handover: true })]) {
      expect(await redis.client.publish(channel, text)).toBe(1);
    }
    const answer = await asked;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).choices[0].message.content).toContain("within one hour");
    expect(replica.child.exitCode).toBeNull();
    const again = await fetch(`${replica.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "Leave?" }] }) });
    expect(again.status).toBe(200);
    await waitFor(() => output.includes("does not parse: ignored"), "the ignored message logged");
  });
});

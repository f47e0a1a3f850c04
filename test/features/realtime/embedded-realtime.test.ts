import { Centrifuge, type PublicationContext } from "centrifuge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

const headers = { authorization: "Bearer sk-1", "service-workspace": "acme", "content-type": "application/json" };
let workspace: RunningWorkspace;

beforeAll(async () => {
  workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: ["sk-1"], stepDelayMs: 40 });
});
afterAll(async () => {
  await workspace.close();
});

async function create(content: string, mode = "ask") {
  const response = await fetch(`${workspace.url}/queries`, { method: "POST", headers, body: JSON.stringify({ content, mode }) });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

async function listed(id: string) {
  const response = await fetch(`${workspace.url}/queries?limit=100`, { headers });
  const page = (await response.json()) as { data: Record<string, any>[] };
  return page.data.find((item) => item.id === id);
}

/** Follows a query's channel with the real client until it publishes a terminal status. */
async function follow(query: Record<string, any>, overrides: { token?: string; subscriptionToken?: string } = {}) {
  const client = new Centrifuge(query.ws_url, { token: overrides.token ?? query.token, websocket: WebSocket, minReconnectDelay: 20, maxReconnectDelay: 100 });
  const subscription = client.newSubscription(query.channel, { token: overrides.subscriptionToken ?? query.subscription_token, since: query.since });
  const publications: PublicationContext[] = [];
  const events: string[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    subscription.on("publication", (context) => {
      publications.push(context);
      if (context.data.status === "PROCESSED" || context.data.status === "FAILED") resolve();
    });
    subscription.on("subscribed", (context) => events.push(`subscribed recovered=${context.recovered}`));
    subscription.on("unsubscribed", (context) => reject(new Error(`unsubscribed ${context.code}`)));
    client.on("disconnected", (context) => reject(new Error(`disconnected ${context.code} ${context.reason}`)));
  });
  subscription.subscribe();
  client.connect();
  try {
    await ended;
  } finally {
    client.disconnect();
  }
  return { publications, events };
}

describe("the embedded workspace's realtime channel", () => {
  it("gives every query a channel on its own host, and publishes the answer word by word to the real centrifuge client", async () => {
    const query = await create("How much annual leave do employees get?");
    expect(query).toMatchObject({ channel: `queries:${query.id}`, ws_url: `${workspace.url.replace("http", "ws")}/connection/websocket` });
    expect(query.since).toMatchObject({ offset: expect.any(Number), epoch: expect.any(String) });
    const { publications, events } = await follow(query);
    expect(events).toEqual(["subscribed recovered=true"]);
    const deltas = publications.filter((publication) => publication.data.delta !== undefined).map((publication) => publication.data.delta as string);
    const final = await listed(query.id);
    expect(final?.status).toBe("PROCESSED");
    // What the create answer already showed (on a busy machine, a step or a word of the answer) is
    // not published again: the two together are the whole answer, nothing missed, nothing twice.
    const shownSteps: unknown[] = query.steps ?? [];
    expect((query.output ?? "") + deltas.join("")).toBe(final?.output);
    // Word by word: every delta is one word (with the whitespace before it), far more of them than the list's chunks.
    for (const delta of deltas) expect(delta).toMatch(/^\s*\S+$|^\s+$/);
    expect(deltas.length).toBeGreaterThan(20);
    const steps = publications.filter((publication) => publication.data.step !== undefined).map((publication) => publication.data.step);
    expect([...shownSteps, ...steps]).toEqual(final?.steps);
    expect(publications.at(-1)?.data).toEqual({ status: "PROCESSED" });
    // Offsets follow one another from the create answer's position.
    expect(publications.map((publication) => publication.offset)).toEqual(publications.map((_p, index) => query.since.offset + index + 1));
  });

  it("recovers everything published before a late subscriber arrived", async () => {
    const query = await create("What is the remote work policy?");
    // Late: after part of the answer was published.
    await waitFor(async () => (await listed(query.id))?.output, "part of the answer published");
    const { publications } = await follow(query);
    const final = await listed(query.id);
    expect(publications.filter((publication) => publication.data.delta).map((publication) => publication.data.delta).join("")).toBe(final?.output);
  });

  it("publishes a failed query's status but not its failure text", async () => {
    const query = await create("leave [fault:failed]");
    const { publications } = await follow(query);
    expect(publications.some((publication) => publication.data.delta)).toBe(false);
    expect(publications.at(-1)?.data).toEqual({ status: "FAILED" });
  });

  it("refuses a forged connection token (close 3500) and a forged subscription token (error 103), as Centrifugo does", async () => {
    const query = await create("leave");
    await expect(follow(query, { token: `${query.token}x` })).rejects.toThrow(/disconnected 3500/);
    await expect(follow(query, { subscriptionToken: "forged" })).rejects.toThrow(/unsubscribed 103/);
    const other = await create("remote work");
    await expect(follow(query, { subscriptionToken: other.subscription_token })).rejects.toThrow(/unsubscribed 103/);
  });

  it("answers other paths of an upgrade with 404, and leaves no connection open after clients leave", async () => {
    const socket = new WebSocket(`${workspace.url.replace("http", "ws")}/elsewhere`);
    const status = await new Promise((resolve) => socket.on("unexpected-response", (_request, response) => resolve(response.statusCode)));
    expect(status).toBe(404);
    await waitFor(() => workspace.realtime?.endpoint.openConnections === 0, "no connection open");
  });
});

import { describe, expect, it } from "vitest";
import { upstreamQuerySchema } from "../../../src/upstream/query-schemas.js";
import { realtimeChannelOf, toQuerySnapshot } from "../../../src/upstream/to-query-snapshot.js";

const fields = {
  channel: "queries:q1",
  token: "ctok",
  subscription_token: "stok",
  ws_url: "wss://rt.example.com/connection/websocket",
  since: { offset: 7, epoch: "abc" },
};

describe("a query's realtime channel", () => {
  it("is read from a create answer that names an endpoint, a channel and a position", () => {
    const query = upstreamQuerySchema.parse({ id: "q1", status: "PENDING", ...fields });
    expect(toQuerySnapshot(query).channel).toEqual({
      wsUrl: fields.ws_url,
      token: "ctok",
      channel: "queries:q1",
      subscriptionToken: "stok",
      since: { offset: 7, epoch: "abc" },
    });
  });

  it("is absent without a position, an endpoint or a channel (the query is polled alone)", () => {
    for (const missing of ["since", "ws_url", "channel"] as const) {
      const { [missing]: _left, ...rest } = fields;
      expect(realtimeChannelOf(upstreamQuerySchema.parse({ id: "q1", ...rest }))).toBeUndefined();
    }
    expect(toQuerySnapshot(upstreamQuerySchema.parse({ id: "q1", status: "PROCESSING" })).channel).toBeUndefined();
  });

  it("never makes a malformed realtime field fail the create answer", () => {
    const query = upstreamQuerySchema.parse({ id: "q1", status: "PENDING", ...fields, since: { offset: "seven" }, ws_url: 42, token: null });
    expect(query.id).toBe("q1");
    expect(realtimeChannelOf(query)).toBeUndefined();
    expect(realtimeChannelOf(upstreamQuerySchema.parse({ id: "q1", ...fields, token: null, subscription_token: undefined }))).toMatchObject({
      token: "",
      subscriptionToken: "",
    });
  });
});

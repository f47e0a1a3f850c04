import { describe, expect, it } from "vitest";
import { AuthenticationError, GatewayTimeoutError, UpstreamError } from "../../../src/errors/adapter-error.js";
import { createQuery } from "../../../src/upstream/create-query.js";
import type { QueryPage, WorkspaceClient } from "../../../src/upstream/workspace-client.js";

/** A client whose create fails with `error` and whose list shows `pages`. */
function fakeClient(error: Error, pages: QueryPage[]) {
  const calls = { create: 0, list: 0 };
  const client: WorkspaceClient = {
    baseUrl: "http://fake",
    createQuery: async () => {
      calls.create += 1;
      throw error;
    },
    listQueries: async (_caller, page) => {
      calls.list += 1;
      return pages[page.cursor === undefined ? 0 : Number(page.cursor)] ?? { items: [], nextCursor: null, hasMore: false };
    },
    listWorkspaces: async () => ({ ids: [], nextCursor: null, hasMore: false }),
    checkHealth: async () => true,
    close: async () => undefined,
  };
  return { client, calls };
}

const caller = { credential: "k", workspace: "acme" };
const body = { content: "leave", id: "mine", mode: "ask" };
const options = () => ({ maxListPages: 3, signal: new AbortController().signal });

describe("createQuery when the create answer is lost", () => {
  it("carries on with the query it finds in the list (on a later page too), and never creates again", async () => {
    const { client, calls } = fakeClient(new UpstreamError("connection reset"), [
      { items: [{ id: "other" }], nextCursor: "1", hasMore: true },
      { items: [{ id: "mine", status: "PROCESSING" }], nextCursor: null, hasMore: false },
    ]);
    expect(await createQuery(client, caller, body, options())).toMatchObject({ id: "mine", status: "PROCESSING" });
    expect(calls).toEqual({ create: 1, list: 2 });
  });

  it("reports the original error when the query is not in the list, or the lookup fails", async () => {
    const timeout = new GatewayTimeoutError("no answer");
    const { client } = fakeClient(timeout, [{ items: [], nextCursor: null, hasMore: false }]);
    await expect(createQuery(client, caller, body, options())).rejects.toBe(timeout);
    const failing = fakeClient(timeout, []);
    failing.client.listQueries = async () => {
      throw new UpstreamError("down");
    };
    await expect(createQuery(failing.client, caller, body, options())).rejects.toBe(timeout);
  });

  it("does not look for a query whose create was refused outright, or whose client left", async () => {
    const refused = fakeClient(new AuthenticationError("Invalid API key"), []);
    await expect(createQuery(refused.client, caller, body, options())).rejects.toBeInstanceOf(AuthenticationError);
    expect(refused.calls.list).toBe(0);
    const controller = new AbortController();
    controller.abort();
    const left = fakeClient(new UpstreamError("reset"), []);
    await expect(createQuery(left.client, caller, body, { maxListPages: 3, signal: controller.signal })).rejects.toBeInstanceOf(UpstreamError);
    expect(left.calls.list).toBe(0);
  });
});

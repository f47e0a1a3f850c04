import pino from "pino";
import { describe, expect, it } from "vitest";
import { MemoryConversationsApiStore } from "../../../../src/continuity/conversations-api/conversations-api-store.js";
import { ConversationsApi } from "../../../../src/continuity/conversations-api/conversations-api.js";
import { MemoryResponseStore, type ResponseStore } from "../../../../src/continuity/responses/response-store.js";
import { StoredResponses } from "../../../../src/continuity/responses/stored-responses.js";
import { ResponseBodyEncoder } from "../../../../src/dialects/responses/response-body-encoder.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";
import type { StoredValue } from "../../../../src/dialects/responses/stored-value.js";
import { ContinuationUnavailableError, NotFoundError } from "../../../../src/errors/adapter-error.js";
import { resolveReferences, visibleResponse } from "../../../../src/http/responses/response-lookups.js";
import { ResponseTurns, type StoredResponse, type Turn } from "../../../../src/http/responses/response-turns.js";
import { randomIds } from "../../../../src/util/ids.js";
import { systemClock } from "../../../../src/util/clock.js";

// The Responses API's stored responses (docs/responses-api.md): who may see one, what an
// `item_reference` names, and the turn stored as an answer ends; continuity keeps the records.

const USAGE = { promptTokens: 4, completionTokens: 3, reasoningTokens: 0 };

/** An encoder of a finished answer to `id`, and the turn that goes with it. */
function finishedTurn(id: string, options: { store?: boolean; conversation?: string | null; principal?: string } = {}) {
  const body = responseRequestSchema({ maxMessages: 10 }).parse({ model: "ask", input: "How much leave?", store: options.store ?? true });
  const meta = { ...metaOf(id, body, 1_700_000_000, null), conversation: options.conversation ?? null };
  const encoder = new ResponseBodyEncoder(meta, () => 1_700_000_001);
  encoder.add({ type: "text", choice: 0, text: "25 days." });
  encoder.add({ type: "cited", choice: 0, citations: [], sources: [] });
  encoder.body(USAGE);
  const input = [{ id: `in_${id}`, type: "message", role: "user", content: [{ type: "input_text", text: "How much leave?" }] }];
  const turn: Turn = { id, principal: options.principal ?? "hash", workspace: "acme", queryId: `q-${id}`, meta, input, conversation: options.conversation ?? null };
  return { encoder, turn };
}

/** Stored responses over `store`, the turns stored into them, and what they report. */
function storedOver(store: ResponseStore<StoredValue> = new MemoryResponseStore(100)) {
  const refused: number[] = [];
  const conversations = new MemoryConversationsApiStore(10, 100);
  const logger = pino({ level: "silent" });
  const stored = new StoredResponses({ store, clock: systemClock, logger, ttlSeconds: 60, writeWaitMs: 1000, onRefused: () => refused.push(1) });
  const api = new ConversationsApi({ store: conversations, ttlSeconds: 60, clock: systemClock, ids: randomIds, logger });
  const turns = new ResponseTurns({ stored, conversations: api, logger });
  return { stored, turns, store, conversations, refused };
}

const failing: ResponseStore<StoredValue> = {
  get: async () => Promise.reject(new Error("Redis did not answer")),
  findByItem: async () => Promise.reject(new Error("Redis did not answer")),
  put: async () => undefined,
  delete: async () => false,
  close: async () => undefined,
};

describe("StoredResponses", () => {
  it("stores a finished turn with store: true, and shows it only to its credential, in its workspace or when none is named", async () => {
    const { stored, turns, store } = storedOver();
    const { encoder, turn } = finishedTurn("resp_mine");
    await turns.store(turn, encoder);
    const entry = (await store.get("resp_mine")) as StoredResponse;
    expect(entry).toMatchObject({ id: "resp_mine", principal: "hash", workspace: "acme", queryId: "q-resp_mine", itemIds: ["msg_mine"] });
    expect(entry.value.response.output[0]).toMatchObject({ type: "message", id: "msg_mine" });
    expect(entry.value.usage).toEqual(USAGE);
    expect((await visibleResponse(stored, "resp_mine", { principal: "hash", workspace: "acme" }, "response_id")).id).toBe("resp_mine");
    expect((await visibleResponse(stored, "resp_mine", { principal: "hash", workspace: undefined }, "response_id")).id).toBe("resp_mine");
    for (const [principal, workspace] of [["other", "acme"], ["hash", "globex"]] as const) {
      expect(await stored.visible("resp_mine", principal, workspace)).toBeNull();
      await expect(visibleResponse(stored, "resp_mine", { principal, workspace }, "previous_response_id")).rejects.toMatchObject({
        status: 404,
        param: "previous_response_id",
        code: "previous_response_not_found",
      });
    }
  });

  it("stores nothing with store: false, but adds the turn to its conversation's items either way", async () => {
    const { turns, store, conversations } = storedOver();
    await conversations.create({ id: "conv_1", principal: "hash", workspace: "acme", createdAt: 1, metadata: {}, queryId: "q-c" }, [], 60);
    const { encoder, turn } = finishedTurn("resp_unstored", { store: false, conversation: "conv_1" });
    await turns.store(turn, encoder);
    expect(await store.get("resp_unstored")).toBeNull();
    expect((await conversations.items("conv_1")).map((item) => item.id)).toEqual(["in_resp_unstored", "msg_unstored"]);
  });

  it("resolves an item_reference to the stored output item it names, and refuses an unknown or foreign one with a 404", async () => {
    const { stored, turns } = storedOver();
    const mine = finishedTurn("resp_ref");
    await turns.store(mine.turn, mine.encoder);
    const theirs = finishedTurn("resp_theirs", { principal: "other" });
    await turns.store(theirs.turn, theirs.encoder);
    const items = [{ id: "in_1", type: "message", role: "user" }, { id: "msg_ref", type: "item_reference" }];
    const looker = { principal: "hash", workspace: "acme" };
    const { resolved, lastReferenced } = await resolveReferences(stored, items, looker);
    expect(resolved.map((item) => [item.id, item.type])).toEqual([["in_1", "message"], ["msg_ref", "message"]]);
    expect(lastReferenced?.id).toBe("resp_ref");
    for (const id of ["msg_unknown", "msg_theirs"]) {
      const error = await resolveReferences(stored, [{ id, type: "item_reference" }], looker).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ param: "input", code: "item_not_found" });
    }
  });

  it("refuses with a 503 to retry, counted, when the store does not answer: never 'not found'", async () => {
    const { stored, refused } = storedOver(failing);
    const looker = { principal: "hash", workspace: "acme" };
    const lookup = await visibleResponse(stored, "resp_x", looker, "previous_response_id").catch((caught: unknown) => caught);
    expect(lookup).toBeInstanceOf(ContinuationUnavailableError);
    expect(lookup).toMatchObject({ status: 503, code: "response_store_unavailable", headers: { "retry-after": "1" } });
    const reference = await resolveReferences(stored, [{ id: "msg_x", type: "item_reference" }], looker).catch((caught: unknown) => caught);
    expect(reference).toBeInstanceOf(ContinuationUnavailableError);
    expect(refused).toHaveLength(2);
  });

  it("never asks the store for an id that is no response id", async () => {
    const { stored, refused } = storedOver(failing);
    await expect(visibleResponse(stored, "../etc/passwd", { principal: "hash", workspace: "acme" }, "response_id")).rejects.toBeInstanceOf(NotFoundError);
    expect(refused).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { groupTag, redisKeys } from "../../../src/redis/keys.js";
import { keySlot } from "../../../src/redis/key-slot.js";

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
function hashedPart(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe("the Redis key names", () => {
  const keys = redisKeys("workspace-openai-adapter:");

  it("stay byte for byte what deployments' Redis holds", () => {
    expect(keys.thread("h:abc")).toBe("workspace-openai-adapter:conversation:h:abc");
    expect(keys.apiConversation("conv_1", "record")).toBe("workspace-openai-adapter:conversations:{conv_1}:record");
    expect(keys.apiConversation("conv_1", "items")).toBe("workspace-openai-adapter:conversations:{conv_1}:items");
    expect(keys.oauth("token:abc")).toBe("workspace-openai-adapter:oauth:token:abc");
    expect(keys.oauthAttempts("{register:127.0.0.1}")).toBe("workspace-openai-adapter:oauth-attempts:{register:127.0.0.1}");
    expect(keys.response("resp_1")).toBe("workspace-openai-adapter:response:resp_1");
    expect(keys.responseItem("msg_1")).toBe("workspace-openai-adapter:response-item:msg_1");
    expect(keys.pollLease("hash:acme")).toBe("workspace-openai-adapter:{hash:acme}:lease");
    expect(keys.pollWaiting("hash:acme")).toBe("workspace-openai-adapter:{hash:acme}:waiting");
    expect(keys.pollChannel("hash:acme")).toBe("workspace-openai-adapter:{hash:acme}:snapshots");
    expect(keys.background("resp_1", "record")).toBe("workspace-openai-adapter:background:{resp_1}:record");
    expect(keys.background("resp_1", "events")).toBe("workspace-openai-adapter:background:{resp_1}:events");
    expect(keys.background("resp_1", "ended")).toBe("workspace-openai-adapter:background:{resp_1}:ended");
    expect(keys.background("resp_1", "lease")).toBe("workspace-openai-adapter:background:{resp_1}:lease");
    expect(keys.queryOwner("6f1c-q")).toBe("workspace-openai-adapter:query-owner:{6f1c-q}");
    expect(groupTag("hash", "acme")).toBe("{hash:acme}");
    expect(keys.limitWindow(groupTag("hash", "acme"), "rpm")).toBe("workspace-openai-adapter:limit:{hash:acme}:rpm");
    expect(keys.limitWindow(groupTag("hash", "acme"), "tpm")).toBe("workspace-openai-adapter:limit:{hash:acme}:tpm");
    expect(keys.limitSlots(groupTag("hash", "acme"))).toBe("workspace-openai-adapter:limit:{hash:acme}:slots");
    expect(keys.limitQuota(groupTag("hash", "acme"), "tpd:2026-11-23")).toBe("workspace-openai-adapter:limit:{hash:acme}:tpd:2026-11-23");
    expect(keys.limitQuota(groupTag("hash", "acme"), "tpmo:2026-11")).toBe("workspace-openai-adapter:limit:{hash:acme}:tpmo:2026-11");
    expect(keys.usageDay("2026-11-23")).toBe("workspace-openai-adapter:usage:2026-11-23");
    expect(keys.limitHeld(groupTag("hash", "acme"), "r-1")).toBe("workspace-openai-adapter:limit:{hash:acme}:held:r-1");
    expect(keys.usageCharge("2026-11-23", "c-1")).toBe("workspace-openai-adapter:usage-charge:{workspace-openai-adapter:usage:2026-11-23}:c-1");
  });

  it("put each group's keys used together in one cluster slot", () => {
    const group = "hash:acme";
    const tag = groupTag("hash", "acme");
    expect(new Set([keys.pollLease(group), keys.pollWaiting(group), keys.pollChannel(group)].map(hashedPart))).toEqual(new Set([group]));
    const quotas = [keys.limitQuota(tag, "tpd:2026-11-23"), keys.limitQuota(tag, "tpmo:2026-11")];
    const limitKeys = [keys.limitWindow(tag, "rpm"), keys.limitWindow(tag, "tpm"), keys.limitSlots(tag), keys.limitHeld(tag, "r-1"), ...quotas];
    expect(new Set(limitKeys.map(hashedPart))).toEqual(new Set([group]));
    const parts = ["record", "events", "ended", "lease"] as const;
    expect(new Set(parts.map((part) => hashedPart(keys.background("resp_1", part))))).toEqual(new Set(["resp_1"]));
    // A charge's mark and its day's hash, which one script touches: the same slot, though the day's key has no tag.
    expect(keySlot(keys.usageCharge("2026-11-23", "c-1"))).toBe(keySlot(keys.usageDay("2026-11-23")));
  });

  it("live under the deployment's prefix", () => {
    const other = redisKeys("staging:");
    for (const key of [other.thread("c:x"), other.response("r"), other.responseItem("i"), other.pollLease("g"), other.limitSlots("{g}")]) {
      expect(key.startsWith("staging:")).toBe(true);
    }
  });
});

import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import { usageErrors } from "../../helpers/openai-schemas.js";
import { ADMIN_KEY, BARE_KEY, chatAnswer, listedKeys, mcpAnswer, readUsage, responseAnswer, samples, SENDERS, type Spent, sumsByGroup, sumsOf } from "../../helpers/governance.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md: named keys, a gateway's identities, usage in OpenAI's Usage API shape, the
// Prometheus counters and the audit trail, on one replica counting in memory.
const { search: SEARCH, legal: LEGAL, alice: ALICE, bob: BOB } = SENDERS;
/** A key without a name is its hash's first characters (docs/governance.md#who-asks). */
const BARE_ACCOUNT = `key:${credentialHash(BARE_KEY).slice(0, 12)}`;
const ALL_KEYS = [SEARCH.key, LEGAL.key, ALICE.key, BARE_KEY, ADMIN_KEY, API_KEY];

describe("usage per key, workspace and mode (one replica, in memory)", () => {
  let stack: Stack;
  let auditFile: string;
  const spent: Spent[] = [];
  // A minute back, but never into yesterday: the buckets are UTC days, and the paging below counts them.
  const now = Math.floor(Date.now() / 1000);
  const start = Math.max(now - 60, now - (now % 86_400));

  beforeAll(async () => {
    auditFile = join(mkdtempSync(join(tmpdir(), "adapter-audit-")), "audit.jsonl");
    stack = await startStack({ ...listedKeys(API_KEY), AUDIT_LOG: auditFile });
    const { url } = stack;
    spent.push(await chatAnswer(url, SEARCH, "acme", "How much annual leave do I get?", false));
    spent.push(await chatAnswer(url, LEGAL, "globex", "What is the travel policy?", true));
    spent.push(await chatAnswer(url, ALICE, "acme", "How much annual leave do I get?", true));
    spent.push(await chatAnswer(url, BOB, "acme", "What is the travel policy?", false));
    spent.push(await responseAnswer(url, SEARCH, "acme", "What is the travel policy?", "reason", false));
    spent.push(await responseAnswer(url, BOB, "globex", "How much annual leave do I get?", "ask", true));
    spent.push(await mcpAnswer(url, LEGAL, "acme", "How much annual leave do I get?"));
    spent.push(await mcpAnswer(url, ALICE, "globex", "What is the travel policy?"));
    // The gateway's identity header from a key that is not a gateway's: ignored.
    spent.push(await chatAnswer(url, { key: BARE_KEY, headers: { "x-litellm-user_api_key_user_id": "alice" }, account: BARE_ACCOUNT }, "acme", "What is the travel policy?", false));
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("sums, per key or gateway identity, workspace and mode, the usage the answers returned", async () => {
    const expected = sumsOf(spent);
    const query = `start_time=${start}&group_by=api_key_id,project_id,model`;
    const page = await waitFor(async () => {
      const read = await readUsage(stack.url, ADMIN_KEY, query);
      return JSON.stringify([...sumsByGroup(read.body)].sort()) === JSON.stringify([...expected].sort()) ? read : undefined;
    }, "the usage endpoint's sums to equal the answers' usage").catch(async () => {
      const read = await readUsage(stack.url, ADMIN_KEY, query);
      expect(Object.fromEntries(sumsByGroup(read.body))).toEqual(Object.fromEntries(expected));
      throw new Error("unreachable");
    });
    expect(usageErrors("UsageResponse", page.body)).toEqual([]);
    const accounts = new Set([...sumsByGroup(page.body).keys()].map((name) => name.split(" ")[0]));
    expect(accounts).toEqual(new Set(["team-search", "team-legal", "litellm/alice", "litellm/bob", BARE_ACCOUNT]));
    expect(JSON.stringify(page.body)).not.toMatch(/sk-/);
  });

  it("answers in OpenAI's shape: today's bucket, ungrouped results null, pages by day", async () => {
    const whole = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}`);
    expect(whole.status).toBe(200);
    const today = whole.body.data.at(-1);
    expect(today.results).toHaveLength(1);
    expect(today.results[0]).toMatchObject({ object: "organization.usage.completions.result", api_key_id: null, project_id: null, model: null, num_model_requests: spent.length });
    const days = await readUsage(stack.url, ADMIN_KEY, `start_time=${start - 3 * 86_400}&limit=2&group_by[]=model&group_by[]=api_key_id`);
    expect(days.body).toMatchObject({ object: "page", has_more: true });
    expect(days.body.data).toHaveLength(2);
    expect(days.body.data[1].start_time - days.body.data[0].start_time).toBe(86_400);
    const next = await readUsage(stack.url, ADMIN_KEY, `start_time=${start - 3 * 86_400}&limit=2&page=${days.body.next_page}`);
    expect(next.body).toMatchObject({ has_more: false, next_page: null });
    expect(next.body.data.at(-1).results[0].num_model_requests).toBe(spent.length);
    const filtered = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&api_key_ids=litellm/alice&models=ask&group_by=project_id`);
    const results = filtered.body.data.flatMap((bucket: { results: unknown[] }) => bucket.results);
    expect(results.map((result: { project_id: string }) => result.project_id).sort()).toEqual(["acme", "globex"]);
  });

  it("reads a filter in every array form clients send, and refuses one it cannot read rather than answer every row", async () => {
    const accountsOf = (page: { data: { results: { api_key_id: string }[] }[] }) =>
      [...new Set(page.data.flatMap((bucket) => bucket.results.map((result) => result.api_key_id)))].sort();
    const forms = [
      "api_key_ids=litellm/alice&api_key_ids=team-search",
      "api_key_ids[]=litellm/alice&api_key_ids[]=team-search",
      "api_key_ids[0]=litellm/alice&api_key_ids[1]=team-search",
      "api_key_ids[1]=team-search&api_key_ids[0]=litellm/alice",
      "api_key_ids=litellm/alice,team-search",
    ];
    for (const form of forms) {
      const read = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id&${form}`);
      expect(read.status, form).toBe(200);
      expect(accountsOf(read.body), form).toEqual(["litellm/alice", "team-search"]);
    }
    const one = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id&api_key_ids[0]=litellm/alice`);
    expect(accountsOf(one.body)).toEqual(["litellm/alice"]);
    for (const unread of ["api_key_ids[name]=litellm/alice", "api_key_ids[0][x]=litellm/alice", "api_key_id=litellm/alice", "apiKeyIds=litellm/alice", "__proto__=x"]) {
      const refused = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=api_key_id&${unread}`);
      expect(refused.status, unread).toBe(422);
      const [name] = unread.split("=");
      expect(refused.body.detail, unread).toEqual([expect.objectContaining({ loc: ["query", name], type: "extra_forbidden" })]);
      expect(refused.body.error, unread).toMatchObject({ type: "invalid_request_error" });
    }
  });

  it("refuses any credential but an admin key, and says what is wrong with a query", async () => {
    const asClient = await fetch(`${stack.url}/v1/organization/usage/completions?start_time=${start}`, { headers: { authorization: `Bearer ${SEARCH.key}` } });
    expect(asClient.status).toBe(403);
    expect(((await asClient.json()) as { error: unknown }).error).toMatchObject({ type: "permission_error", code: "not_an_admin_key" });
    expect((await fetch(`${stack.url}/v1/organization/usage/completions?start_time=${start}`)).status).toBe(401);
    const missing = await readUsage(stack.url, ADMIN_KEY, "");
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["query", "start_time"] });
    const hourly = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&bucket_width=1h`);
    expect(hourly.status).toBe(400);
    expect(hourly.body.error).toMatchObject({ param: "bucket_width" });
    const grouped = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}&group_by=team`);
    expect(grouped.status).toBe(422);
    expect(grouped.body.detail[0].loc).toEqual(["query", "group_by", 0]);
  });

  it("counts tokens in Prometheus by named key and gateway, every key without a name folded into one label", async () => {
    const tokens = await samples(stack.url, "adapter_tokens_total");
    const keys = new Set([...tokens.keys()].map((labels) => /key="([^"]*)"/.exec(labels)?.[1]));
    expect(keys).toEqual(new Set(["team-search", "team-legal", "litellm", "other"]));
    const answers = await samples(stack.url, "adapter_answers_total");
    expect([...answers.values()].reduce((sum, value) => sum + value, 0)).toBe(spent.length);
    const input = [...tokens].filter(([labels]) => labels.includes('kind="input"')).reduce((sum, [, value]) => sum + value, 0);
    expect(input).toBe(spent.reduce((sum, answer) => sum + answer.input, 0));
  });

  it("writes one audit record per answer, with who, where and what it cost, no text and never a key", async () => {
    const records = await waitFor(() => {
      const lines = readFileSync(auditFile, "utf8").split("\n").filter(Boolean);
      return lines.length >= spent.length ? lines.map((line) => JSON.parse(line) as Record<string, any>) : undefined;
    }, "an audit record per answer");
    expect(records).toHaveLength(spent.length);
    const text = readFileSync(auditFile, "utf8");
    for (const key of ALL_KEYS) expect(text).not.toContain(key);
    expect(text).not.toMatch(/annual leave|travel policy/i);
    for (const record of records) {
      expect(Object.keys(record).sort()).toEqual(
        ["time", "request_id", "key", "workspace", "mode", "dialect", "query_ids", "status", "completed", "background", "tokens", "sources", "duration_ms"].sort(),
      );
      expect(record, JSON.stringify(record)).toMatchObject({ status: 200, completed: true });
      expect(record.sources).toBeGreaterThan(0);
    }
    const summary = records.map((record) => `${record.key} ${record.dialect} ${record.mode} ${record.background}`).sort();
    expect(summary).toEqual(
      [
        "team-search chat.completions ask false",
        "team-legal chat.completions ask false",
        "litellm/alice chat.completions ask false",
        "litellm/bob chat.completions ask false",
        "team-search responses reason false",
        "litellm/bob responses ask true",
        "team-legal mcp ask false",
        "litellm/alice mcp ask false",
        `${BARE_ACCOUNT} chat.completions ask false`,
      ].sort(),
    );
    const byTokens = new Map(spent.map((answer) => [`${answer.account} ${answer.input} ${answer.output}`, true]));
    for (const record of records) expect(byTokens.has(`${record.key} ${record.tokens.input} ${record.tokens.output}`)).toBe(true);
  });
});

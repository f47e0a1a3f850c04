import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exchange } from "../../helpers/exchange.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/observability.md#metrics: /metrics on a port of its own and behind a key, and key names in
// its labels only where the operator allows them.

const SCRAPE_KEY = "sk-scrape-CANARY-71c2";
const TEAM_KEY = "sk-team-metrics-1";

/** The `key` labels of the usage counters a scrape shows. */
const keyLabels = (text: string) => new Set([...text.matchAll(/^adapter_answers_total\{[^}]*key="([^"]*)"/gm)].map((match) => match[1]));

describe("METRICS_PORT and METRICS_API_KEY, on a process of its own", () => {
  let stack: Stack;
  let adapter: Replica;
  let metricsUrl: string;

  beforeAll(async () => {
    stack = await startStack();
    adapter = await startReplica(stack.workspace.url, {
      LOG_LEVEL: "info",
      WORKSPACE_API_KEY: API_KEY,
      ADAPTER_API_KEYS: `team-metrics=${TEAM_KEY}`,
      USAGE_COUNTING: "on",
      METRICS_PORT: "0",
      METRICS_API_KEY: SCRAPE_KEY,
    });
    const logged = await waitFor(() => /"url":"(http:\/\/[\d.:]+)\/metrics"/.exec(adapter.output())?.[1], "the metrics port in the log");
    metricsUrl = logged;
  }, 60_000);
  afterAll(async () => {
    await stopAll(adapter ? [adapter] : []);
    await stack?.close();
  });

  it("serves /metrics on its own port only, behind the key, and names keys there", async () => {
    expect(new URL(metricsUrl).port).not.toBe(new URL(adapter.url).port);
    const answered = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers({ authorization: `Bearer ${TEAM_KEY}` }), body: JSON.stringify(chatBody("How many vacation days?")) });
    expect(answered.status).toBe(200);
    await answered.text();
    // Not on the API port any more.
    expect((await exchange(`${adapter.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE_KEY}` } })).status).toBe(404);
    for (const authorization of [undefined, "Bearer sk-wrong", `Bearer ${TEAM_KEY}`]) {
      const refused = await exchange(`${metricsUrl}/metrics`, { headers: authorization ? { authorization } : {} });
      expect([authorization, refused.status]).toEqual([authorization, 401]);
      expect(refused.body).not.toContain("adapter_");
    }
    const scraped = await waitFor(async () => {
      const scrape = await exchange(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${SCRAPE_KEY}` } });
      return scrape.status === 200 && keyLabels(scrape.body).size > 0 ? scrape : undefined;
    }, "the answer counted in the usage counters");
    expect(scraped.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(keyLabels(scraped.body)).toEqual(new Set(["team-metrics"]));
    // Nothing else of the adapter is there.
    expect((await exchange(`${metricsUrl}/v1/models`, { headers: { authorization: `Bearer ${TEAM_KEY}` } })).status).toBe(404);
    expect((await exchange(`${metricsUrl}/metrics`, { method: "POST", body: "{}", headers: { authorization: `Bearer ${SCRAPE_KEY}` } })).status).toBe(405);
  });

  it("refuses the scrape key at the answer routes (403), never sending it upstream", async () => {
    const refused = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers({ authorization: `Bearer ${SCRAPE_KEY}` }), body: JSON.stringify(chatBody("Hello?")) });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error.code).toBe("key_not_for_answers");
    expect(adapter.output()).not.toContain(SCRAPE_KEY);
  });
});

describe("METRICS_KEY_NAMES", () => {
  const stacks: Stack[] = [];
  afterAll(() => Promise.all(stacks.map((stack) => stack.close())));

  /** The usage counters' key labels after one answer from a named key, with `environment` set. */
  async function labelsWith(environment: Record<string, string>, scrapeHeaders: Record<string, string> = {}): Promise<Set<string | undefined>> {
    const stack = await startStack({ WORKSPACE_API_KEY: API_KEY, ADAPTER_API_KEYS: `team-metrics=${TEAM_KEY}`, USAGE_COUNTING: "on", ...environment });
    stacks.push(stack);
    const answered = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers({ authorization: `Bearer ${TEAM_KEY}` }), body: JSON.stringify(chatBody("How many vacation days?")) });
    await answered.text();
    return waitFor(async () => {
      const scrape = await exchange(`${stack.url}/metrics`, { headers: scrapeHeaders });
      const labels = keyLabels(scrape.body);
      return labels.size > 0 ? labels : undefined;
    }, "the answer counted");
  }

  it("by default names no key on an open /metrics, and names them behind METRICS_API_KEY or when set on", async () => {
    expect(await labelsWith({})).toEqual(new Set(["named"]));
    expect(await labelsWith({ METRICS_API_KEY: SCRAPE_KEY }, { authorization: `Bearer ${SCRAPE_KEY}` })).toEqual(new Set(["team-metrics"]));
    expect(await labelsWith({ METRICS_KEY_NAMES: "on" })).toEqual(new Set(["team-metrics"]));
    expect(await labelsWith({ METRICS_API_KEY: SCRAPE_KEY, METRICS_KEY_NAMES: "off" }, { authorization: `Bearer ${SCRAPE_KEY}` })).toEqual(new Set(["named"]));
  });

  it("behind METRICS_API_KEY on the API port, a scrape without it is a 401", async () => {
    const stack = await startStack({ METRICS_API_KEY: SCRAPE_KEY });
    stacks.push(stack);
    const refused = await exchange(`${stack.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { type: "authentication_error" } });
    expect((await exchange(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE_KEY}` } })).status).toBe(200);
  });
});

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, PROMETHEUS, prometheusPath } from "../../helpers/external-programs.js";
import { freePort } from "../../helpers/redis-server.js";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// Prometheus stays the metrics surface (docs/observability.md): the real prometheus scrapes the
// adapter's /metrics, so its parser checks the exposition format, and a series is read back
// through its HTTP API. It scrapes as deploy/ sets it up: on the metrics port of its own, with the
// metrics key (Prometheus' `authorization` setting).

interface QueryResult {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

/** The key Prometheus scrapes with (`METRICS_API_KEY`). */
const SCRAPE_KEY = "sk-prometheus-test-scrape";

describeWith(PROMETHEUS, "Prometheus scraping /metrics", () => {
  let stack: Stack;
  let prometheus: ChildProcess;
  let api: string;
  let output = "";
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "adapter-prometheus-"));
    stack = await startStack({ METRICS_PORT: "0", METRICS_API_KEY: SCRAPE_KEY });
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    const target = new URL(stack.metricsUrl ?? "").host;
    writeFileSync(
      join(folder, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "scrape_configs:",
        "  - job_name: adapter",
        "    authorization:",
        `      credentials: ${SCRAPE_KEY}`,
        "    static_configs:",
        `      - targets: ["${target}"]`,
        "",
      ].join("\n"),
    );
    prometheus = spawn(
      prometheusPath(),
      [
        `--config.file=${join(folder, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(folder, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    prometheus.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
  });
  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus.once("exit", resolve));
      prometheus.kill("SIGTERM");
      await exited;
    }
    await stack?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** Polls Prometheus until `read` returns something, or fails with what Prometheus said. */
  async function eventually<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const value = await read().catch(() => undefined);
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${what} did not happen in 20 s; prometheus said: ${output.slice(-2000)}`);
  }

  async function query(expression: string): Promise<QueryResult> {
    const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expression)}`);
    return (await response.json()) as QueryResult;
  }

  it("scrapes the adapter without errors and answers a query for a request the adapter counted", async () => {
    const answered = await fetch(`${stack.url}/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(chatBody("How many vacation days do employees get?")),
    });
    expect(answered.status).toBe(200);
    await answered.text();

    // The target is up and its last scrape parsed: Prometheus' parser accepted the exposition format.
    const target = await eventually(async () => {
      const targets = (await (await fetch(`${api}/api/v1/targets`)).json()) as {
        data: { activeTargets: { health: string; lastError: string; labels: Record<string, string> }[] };
      };
      const found = targets.data.activeTargets[0];
      return found?.health === "up" ? found : undefined;
    }, "a successful scrape");
    expect(target.lastError).toBe("");
    expect(target.labels.job).toBe("adapter");

    const requests = await eventually(async () => {
      const result = await query('adapter_http_requests_total{route="/v1/chat/completions",mode="ask",status="200"}');
      return result.data.result.length > 0 ? result : undefined;
    }, "the request counter in a query");
    expect(requests.status).toBe("success");
    expect(requests.data.result[0]?.value[1]).toBe("1");
    expect(requests.data.result[0]?.metric).toMatchObject({ job: "adapter", route: "/v1/chat/completions", mode: "ask", status: "200" });

    // A histogram, read back through PromQL: its count matches, its buckets are cumulative.
    const count = await query('adapter_http_request_duration_seconds_count{route="/v1/chat/completions"}');
    expect(count.data.result[0]?.value[1]).toBe("1");
    const buckets = await query('adapter_http_request_duration_seconds_bucket{route="/v1/chat/completions",le="+Inf"}');
    expect(buckets.data.result[0]?.value[1]).toBe("1");
    const created = await query('sum(adapter_upstream_requests_total{endpoint="POST /queries",outcome="200"})');
    expect(created.data.result[0]?.value[1]).toBe("1");
  }, 60_000);
});

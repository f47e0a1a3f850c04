import { describe, expect, it } from "vitest";
import { exitCodeOf, formatLine, formatSummary, summarize } from "../../../src/check/check-report.js";
import { readCheckSettings } from "../../../src/check/check-settings.js";
import type { ProbeContext } from "../../../src/check/probe-context.js";
import { observationOf } from "../../../src/check/probes/channel-observer.js";
import { createLine } from "../../../src/check/probes/create.js";
import { markersLine } from "../../../src/check/probes/marker-shapes.js";
import type { QueryRun } from "../../../src/check/probes/query-runs.js";
import { queryLine } from "../../../src/check/probes/query-statuses.js";
import { realtimeLine } from "../../../src/check/probes/realtime.js";
import { sourcesLine } from "../../../src/check/probes/source-shapes.js";
import { stepsLine } from "../../../src/check/probes/step-shapes.js";
import type { Mode } from "../../../src/core/modes.js";
import { AuthenticationError, GatewayTimeoutError, RequestValidationError } from "../../../src/errors/adapter-error.js";
import { hostPolicy } from "../../../src/upstream/realtime/allowed-hosts.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import { toQuerySnapshot } from "../../../src/upstream/to-query-snapshot.js";

// The lines `check` draws from what it saw (docs/check.md#what-it-checks), each a pure reading of
// runs made by hand: what passes, and what each deviation fails with.

function context(environment: Record<string, string> = {}): ProbeContext {
  const settings = readCheckSettings({ workspace: "acme" }, { WORKSPACE_BASE_URL: "https://workspace.example.com", WORKSPACE_API_KEY: "sk-key", ...environment });
  const unused = () => {
    throw new Error("not called by a line");
  };
  return {
    settings,
    upstreamUrl: settings.baseUrl,
    client: { baseUrl: settings.baseUrl, createQuery: unused, listQueries: unused, listWorkspaces: unused, checkHealth: unused, close: async () => undefined },
    transport: { send: unused, close: async () => undefined },
    madeUpKey: "made-up",
    realtimePolicy: hostPolicy(settings.baseUrl, settings.config.upstream.realtimeAllowedHosts),
    now: () => 0,
    note: () => undefined,
    phase: () => undefined,
  };
}

/** A run that ended with `final` (a list item), created as `created`. */
function run(final: Partial<UpstreamQuery>, options: { mode?: Mode; created?: Partial<UpstreamQuery>; statuses?: string[] } = {}): QueryRun {
  const item = { id: "q-1", status: "PROCESSED", output: "", steps: [], ...final } as UpstreamQuery;
  const created = { id: "q-1", status: "PENDING", output: "", steps: [], ...options.created } as UpstreamQuery;
  const seen = [...(options.statuses ?? []).map((status) => ({ ...item, status })), item].map((each, index) => ({ at: index * 100, item: each }));
  return {
    mode: options.mode ?? "ask",
    body: { id: "q-1" },
    startedAt: 0,
    created,
    seen,
    shown: [
      { at: 0, snapshot: toQuerySnapshot(created) },
      { at: 500, snapshot: { ...toQuerySnapshot(item), sources: [...toQuerySnapshot(created).sources, ...toQuerySnapshot(item).sources] } },
    ],
    end: "PROCESSED",
    error: null,
    observation: null,
  };
}

describe("the report", () => {
  it("prints one line per check with its setting, sums up, and exits 1 only when a check fails", () => {
    const lines = [
      { name: "health", level: "pass" as const, ok: true, detail: "GET /health answered 200 in 3 ms" },
      { name: "create", level: "fail" as const, ok: false, detail: "refused", setting: "MODE_FIELD" },
      { name: "realtime", level: "warn" as const, ok: true, detail: "no channel" },
      { name: "steps", level: "skip" as const, ok: true, detail: "not run: create failed" },
    ];
    expect(lines.map(formatLine)).toEqual(["✓ health: GET /health answered 200 in 3 ms", "✗ create: refused (setting: MODE_FIELD)", "! realtime: no channel", "– steps: not run: create failed"]);
    expect(formatSummary(summarize(lines))).toBe("1 passed, 1 warning, 1 failed, 1 skipped");
    expect(exitCodeOf(lines)).toBe(1);
    expect(exitCodeOf(lines.filter((line) => line.level !== "fail"))).toBe(0);
  });
});

describe("create and MODE_FIELD", () => {
  it("names the field the service asks for instead", () => {
    const error = new RequestValidationError([{ loc: ["body", "interaction_mode"], msg: "Field required", type: "missing" }]);
    expect(createLine(context(), [], { mode: "ask", error })).toMatchObject({ level: "fail", setting: "MODE_FIELD", detail: expect.stringMatching(/set MODE_FIELD=interaction_mode$/) });
  });

  it("says the service refuses the field the adapter sends", () => {
    const error = new RequestValidationError([{ loc: ["body", "mode"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }]);
    expect(createLine(context(), [], { mode: "ask", error })).toMatchObject({
      level: "fail",
      setting: "MODE_FIELD",
      detail: "POST /queries (ask) answered 422 body.mode: Extra inputs are not permitted (extra_forbidden): the service does not take 'mode' as the adapter sends it: set MODE_FIELD to the service's name for the interaction mode",
    });
  });

  it("passes other refusals on with their setting, and warns of a service that chooses its own ids", () => {
    expect(createLine(context(), [], { mode: "ask", error: new AuthenticationError("Invalid API key") })).toMatchObject({ level: "fail", setting: "WORKSPACE_API_KEY" });
    const renamed = run({}, { created: { id: "server-chosen" } });
    expect(createLine(context(), [renamed], null)).toMatchObject({ level: "warn", detail: expect.stringMatching(/another id than the adapter chose/) });
  });
});

describe("statuses and deadlines", () => {
  it("shows the statuses in turn and the times", () => {
    const line = queryLine(context(), run({ steps: [{ text: "Looking." }] }, { statuses: ["PROCESSING"] }));
    expect(line).toMatchObject({ name: "query.ask", level: "pass", detail: "PENDING → PROCESSING → PROCESSED; first step after 0.5 s, the answer after 0.5 s (ASK_TIMEOUT_MS: 120 s)" });
  });

  it("fails a status the service means as an end, which the adapter waits past", () => {
    const stuck = { ...run({ status: "COMPLETED" }), end: "timeout" as const, error: new GatewayTimeoutError("did not finish") };
    expect(queryLine(context(), stuck)).toMatchObject({ level: "fail", detail: expect.stringMatching(/^PENDING → COMPLETED, not ended within 120 s: the service says COMPLETED, which the adapter does not take for an end/) });
  });
});

describe("steps, sources and markers as the adapter reads them", () => {
  it("fails steps it would drop, naming their shapes, and warns of a tool it cannot name", () => {
    expect(stepsLine([run({ steps: [{ text: "a" }, { type: "message", content: "b" }, { tool: "search" }] })])).toMatchObject({
      level: "fail",
      detail: "1 of 3 steps have shapes the adapter does not read and would drop from the reasoning: {content, type} (it reads {text} and {tool})",
    });
    expect(stepsLine([run({ steps: [{ tool: { arguments: "{}" } }] })])).toMatchObject({ level: "warn" });
    expect(stepsLine([run({ steps: [{ text: "a" }, { tool: { name: "search" } }] })])).toMatchObject({ level: "pass", detail: "2 steps read: 1 text, 1 tool (search); none dropped" });
  });

  it("fails a source entry or a references section it cannot read", () => {
    expect(sourcesLine([run({}, { created: { sources: [{ filename: "a.pdf" }, { id: 7, score: 0.3 }] } as never })])).toMatchObject({
      level: "fail",
      detail: "the adapter would drop 1: ask: sources entry {id, score}",
    });
    expect(sourcesLine([run({ output: "Answer.\n\nReferences:\nSee the handbook and the travel policy for details about this." })])).toMatchObject({ level: "fail" });
    expect(sourcesLine([run({ output: "Answer [1].\n\nSources:\n[1] handbook.md — Handbook" })])).toMatchObject({ level: "pass", detail: "ask: 1 in its references section; none dropped" });
    expect(sourcesLine([run({ output: "No sources here." })])).toMatchObject({ level: "warn" });
  });

  it("fails markers that cite nothing, and leaves code, links, escapes and check boxes alone", () => {
    expect(markersLine([run({ output: "Claims take 30 days [1] and travel is booked [7]." }, { created: { sources: [{ filename: "expenses.txt" }] } as never })])).toMatchObject({
      level: "fail",
      detail: "1 of 2 markers cite nothing the adapter can find, and would stay plain text: [7] (ask)",
    });
    const clean = "See [the guide](https://example.com), `a[1]`, \\[source note\\], [ ] and [x]; it says so [handbook.md, p. 2].";
    expect(markersLine([run({ output: clean })])).toMatchObject({ level: "pass", detail: "ask: 1 [file]: every marker cites a source" });
  });
});

describe("the realtime channel", () => {
  const channel = { ws_url: "wss://rt.other.example/connection/websocket", channel: "queries:q-1", token: "t", subscription_token: "s", since: { offset: 0, epoch: "e" } };

  it("fails a channel whose host the adapter may not contact, naming REALTIME_ALLOWED_HOSTS", () => {
    const followed = run({ output: "done" }, { created: channel });
    const created = followed.created as UpstreamQuery;
    followed.observation = observationOf(toQuerySnapshot(created), toQuerySnapshot(created).channel as never);
    expect(realtimeLine(context(), [followed])).toMatchObject({ level: "fail", setting: "REALTIME_ALLOWED_HOSTS", detail: expect.stringMatching(/set REALTIME_ALLOWED_HOSTS=rt\.other\.example/) });
  });

  it("fails a channel whose text disagrees with the polled output, passes one that matches", () => {
    const allowed = context({ REALTIME_ALLOWED_HOSTS: "rt.other.example" });
    const observed = (deltas: string[]) => {
      const followed = run({ output: "The answer." }, { created: channel });
      const created = toQuerySnapshot(followed.created as UpstreamQuery);
      const observation = observationOf(created, created.channel as never);
      observation.subscribed = true;
      deltas.forEach((delta, index) => {
        observation.publications += 1;
        observation.fields.delta += 1;
        observation.view.apply({ delta }, index + 1);
      });
      followed.observation = observation;
      return followed;
    };
    expect(realtimeLine(allowed, [observed(["The ", "answer."])])).toMatchObject({ level: "pass", detail: expect.stringMatching(/the text matches the polled output \(ask\)$/) });
    expect(realtimeLine(allowed, [observed(["The ", "reply."])])).toMatchObject({ level: "fail", detail: expect.stringMatching(/disagree from character 4/) });
    expect(realtimeLine(allowed, [observed(["The "])])).toMatchObject({ level: "warn", detail: expect.stringMatching(/stopped 7 characters short/) });
  });
});

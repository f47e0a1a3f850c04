import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Tracing is never threaded by hand (docs/architecture/runner.md#tracing): below the edge no module takes an
// optional span or trace, nor branches on one being there. An answer's trace is `UNTRACED_ANSWER`
// when nothing records it, a poller's `pollTracer(NOOP_TRACING)`; the upstream client finds the span
// its calls go under in the adapter's own context (`Tracing.parentSpan`).

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");
/** Where spans are made and ended: the tracing modules themselves, and the edge's request context and its log (a request's server span, traced or not). */
const MAKERS = ["telemetry/", "http/request-context.ts", "http/request-log.ts"];

/** An optional span or trace as a parameter or field, or a branch on a trace being there. */
const HAND_THREADING: RegExp[] = [
  /\b\w+\?\s*:\s*(?:Span|AnswerTrace|ChannelTrace|PollRound)\b/,
  /:\s*(?:Span|AnswerTrace|ChannelTrace|PollRound)\s*\|\s*undefined/,
  /\btrace(?:d)?\?\./,
  /\bif\s*\(\s*(?:\w+\.)*(?:trace|span)\s*\)/,
];

/** The code of a file without its comments. */
function codeOf(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line))
    .map((line) => line.replace(/\s\/\/.*$/, ""))
    .join("\n");
}

function offenders(code: string): string[] {
  return code.split("\n").filter((line) => HAND_THREADING.some((pattern) => pattern.test(line)));
}

describe("tracing is not threaded by hand", () => {
  it("recognises the hand-threading the code used to have", () => {
    const before = [
      "  trace?: AnswerTrace | undefined;",
      "  readonly trace: AnswerTrace | undefined;",
      "    parent?: Span,",
      "  private async listRound(controller: AbortController, othersWaitFor: readonly string[], span?: Span): Promise<boolean> {",
      "    job.trace?.planned(job.plan);",
      "    this.traced?.publication();",
      "      parent: job.trace?.span,",
      "      for (const waiter of this.waiters.get(item.id) ?? []) if (waiter.trace) served.push(waiter.trace.span);",
      "      if (span) endPollSpan(span, pages, found.length, failure);",
    ];
    expect(before.filter((line) => offenders(line).length === 0)).toEqual([]);
  });

  it("below the edge, no module takes an optional span or trace (src/telemetry makes them)", () => {
    const files = readdirSync(src, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const entry of files) {
      const file = relative(src, join(entry.parentPath, entry.name));
      if (MAKERS.some((maker) => file.startsWith(maker))) continue;
      for (const line of offenders(codeOf(readFileSync(join(src, file), "utf8")))) found.push(`${file}: ${line.trim()}`);
    }
    expect(found).toEqual([]);
  });
});

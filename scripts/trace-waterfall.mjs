// `npm run docs:trace`: captures the trace of one streamed answer and draws it as a waterfall,
// docs/trace-waterfall.svg (docs/observability.md, "Tracing", shows it). Everything runs here on
// loopback: the embedded workspace, the adapter with tracing on (OTLP/HTTP JSON), and a small OTLP
// receiver that keeps what the adapter exports. The picture is drawn from those exported spans:
// the request's trace, and the short poll traces linked to its answer.
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { loadConfig } from "../dist/src/config/config.js";
import { startEmbeddedWorkspace } from "../dist/src/embedded-workspace/start-embedded-workspace.js";
import { createAdapter } from "../dist/src/server/create-adapter.js";
import { startServer } from "../dist/src/server/start-server.js";
import { startTracing } from "../dist/src/telemetry/start-tracing.js";
import { packageVersion } from "../dist/src/util/package-info.js";
import pino from "pino";

const output = new URL("../docs/trace-waterfall.svg", import.meta.url);
const QUESTION = "How does the adapter cite sources?";

// --- capture ---

const spans = [];
const receiver = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    for (const resourceSpans of JSON.parse(Buffer.concat(chunks).toString()).resourceSpans ?? []) {
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) spans.push(...(scopeSpans.spans ?? []));
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));

const workspace = await startEmbeddedWorkspace({ workspaces: ["demo"], stepDelayMs: 120 });
// Tracing reads the standard variables from the process's environment, as main.ts starts it.
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiver.address().port}`;
process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
const { tracing } = await startTracing({ serviceVersion: packageVersion() });
const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DEFAULT_WORKSPACE: "demo" });
const adapter = createAdapter(config, workspace.url, { tracing, logger: pino({ level: "silent" }) });
const running = await startServer(adapter, config);

const response = await fetch(`${running.url}/v1/chat/completions`, {
  method: "POST",
  headers: { authorization: "Bearer any-key-works-locally", "content-type": "application/json" },
  body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: QUESTION }] }),
});
await response.text();
await new Promise((resolve) => setTimeout(resolve, 200));
await tracing.flush();
await running.shutdown();
await tracing.shutdown();
await workspace.close();
receiver.close();

// --- the spans to draw: the request's trace, then the polls linked to its answer ---

const nanos = (value) => BigInt(value);
const server = spans.find((span) => span.kind === 2 && span.name === "POST /v1/chat/completions");
if (!server) throw new Error("no server span was exported");
const inTrace = spans.filter((span) => span.traceId === server.traceId);
const answer = inTrace.find((span) => span.name.startsWith("chat "));
const polls = spans.filter((span) => span.name === "poll queries" && (span.links ?? []).some((link) => link.spanId === answer.spanId));
const rows = [];
const addTree = (span, depth, linked) => {
  rows.push({ span, depth, linked });
  const children = spans.filter((child) => child.traceId === span.traceId && child.parentSpanId === span.spanId);
  for (const child of children.sort((a, b) => (nanos(a.startTimeUnixNano) < nanos(b.startTimeUnixNano) ? -1 : 1))) addTree(child, depth + 1, linked);
};
addTree(server, 0, false);
for (const poll of polls.sort((a, b) => (nanos(a.startTimeUnixNano) < nanos(b.startTimeUnixNano) ? -1 : 1))) addTree(poll, 0, true);

// --- drawing ---

const origin = nanos(server.startTimeUnixNano);
const total = Number(nanos(server.endTimeUnixNano) - origin) / 1e6;
const ms = (value) => Number(nanos(value) - origin) / 1e6;
const WIDTH = 1000;
const LABEL = 330;
const PLOT = WIDTH - LABEL - 80;
const ROW = 24;
const TOP = 70;
const x = (milliseconds) => LABEL + (Math.max(0, milliseconds) / total) * PLOT;
const escape = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const COLORS = { 1: "#7c5cc4", 2: "#2f6fbf", 3: "#2e9e6a", 4: "#b07d2b", 5: "#b07d2b" };
const attribute = (span, key) => {
  const found = (span.attributes ?? []).find((entry) => entry.key === key)?.value;
  if (!found) return undefined;
  return found.stringValue ?? found.intValue ?? found.boolValue ?? found.arrayValue?.values?.map((value) => value.stringValue).join(",");
};
const LABELS = {
  "workspace_adapter.first_step": "first step",
  "workspace_adapter.first_text": "first text",
  "workspace_adapter.realtime.first_publication": "first realtime publication",
  "workspace_adapter.query.terminal": "terminal status",
};

const parts = [];
const linkedStart = rows.findIndex((row) => row.linked);
const height = TOP + rows.length * ROW + (linkedStart >= 0 ? ROW : 0) + 110;
parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
parts.push("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>");
parts.push(`<text x="16" y="24" font-size="15" font-weight="bold">One streamed answer, as its trace was exported (${total.toFixed(0)} ms)</text>`);
parts.push(`<text x="16" y="44" fill="#555">POST /v1/chat/completions, model "ask", stream: true: "${escape(QUESTION)}" (embedded workspace, realtime channel on)</text>`);
for (let step = 0; step <= 5; step += 1) {
  const at = (total * step) / 5;
  parts.push(`<line x1="${x(at)}" y1="${TOP - 8}" x2="${x(at)}" y2="${TOP + rows.length * ROW + ROW}" stroke="#e4e4e4"/>`);
  parts.push(`<text x="${x(at)}" y="${TOP - 12}" text-anchor="middle" fill="#777">${at.toFixed(0)} ms</text>`);
}
let y = TOP;
rows.forEach((row, index) => {
  if (index === linkedStart) {
    parts.push(`<text x="16" y="${y + 16}" fill="#777" font-style="italic">linked traces: the shared poller's rounds that served this answer (span links to "${escape(answer.name)}")</text>`);
    y += ROW;
  }
  const { span, depth } = row;
  const start = ms(span.startTimeUnixNano);
  const end = ms(span.endTimeUnixNano);
  const status = attribute(span, "http.response.status_code");
  const label = `${span.name}${status ? ` · ${status}` : ""}`;
  parts.push(`<text x="${16 + depth * 16}" y="${y + 16}" fill="#222">${escape(label)}</text>`);
  parts.push(`<rect x="${x(start)}" y="${y + 5}" width="${Math.max(2, x(end) - x(start))}" height="14" rx="2" fill="${row.linked ? "#9a9a9a" : COLORS[span.kind] ?? "#888"}"/>`);
  parts.push(`<text x="${x(end) + 4}" y="${y + 16}" fill="#555" font-size="11">${(end - start).toFixed(1)} ms</text>`);
  if (span === answer) {
    // Events closer than a marker's width share one marker, labelled with all their numbers.
    const markers = [];
    (span.events ?? []).forEach((event, number) => {
      const at = x(ms(event.timeUnixNano));
      const near = markers.find((marker) => Math.abs(marker.at - at) < 10);
      if (near) near.numbers.push(number + 1);
      else markers.push({ at, numbers: [number + 1] });
    });
    for (const { at, numbers } of markers) {
      parts.push(`<path d="M ${at} ${y + 3} l 5 9 l -5 9 l -5 -9 z" fill="#d9480f" stroke="#fff"/>`);
      parts.push(`<text x="${at}" y="${y + 1}" text-anchor="middle" font-size="10" fill="#d9480f">${numbers.join("·")}</text>`);
    }
  }
  y += ROW;
});
y += 20;
const events = (answer.events ?? []).map((event, number) => `${number + 1} ${LABELS[event.name] ?? event.name} at ${ms(event.timeUnixNano).toFixed(0)} ms`);
parts.push(`<text x="16" y="${y}" fill="#d9480f">events on "${escape(answer.name)}": ${escape(events.join(" · "))}</text>`);
y += 20;
const facts = ["gen_ai.response.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons"]
  .map((key) => `${key}=${attribute(answer, key)}`)
  .join("  ");
parts.push(`<text x="16" y="${y}" fill="#555" font-size="11">${escape(facts)}</text>`);
y += 20;
parts.push(
  `<text x="16" y="${y}" fill="#555" font-size="11">kinds: <tspan fill="${COLORS[2]}">■ server</tspan>  <tspan fill="${COLORS[1]}">■ internal (answer, poll)</tspan>  <tspan fill="${COLORS[3]}">■ client (workspace service calls, realtime subscription)</tspan>  <tspan fill="#9a9a9a">■ linked poll traces</tspan></text>`,
);
parts.push("</svg>");
writeFileSync(output, `${parts.join("\n")}\n`);
process.stdout.write(`wrote ${output.pathname}: ${rows.length} spans (${polls.length} linked polls), ${total.toFixed(0)} ms\n`);
process.exit(0);

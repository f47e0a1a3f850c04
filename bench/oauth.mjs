// What OAuth costs a tool call (`npm run bench`, or `BENCH_ONLY=oauth`): one `ask` tool call at
// `/oauth/mcp` with an access token against the same call at `/mcp` with the key, on one adapter
// with MCP_OAUTH=on (the difference is the token's validation: the token and the grant's sealed key
// looked up, the key decrypted); and `/mcp` on an adapter with MCP_OAUTH=off, which never loads
// the OAuth library. The adapter's CPU per call (its own, from IPC stats), in rounds that take
// turns between the kinds; medians over rounds. The upstream answers at once (instant-upstream).
import { createHash, randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { LOADED_ADAPTER, sequentialLatencies, statsOf } from "./processes.mjs";

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const KEY = "bench-key";
const REDIRECT_URI = "http://127.0.0.1:9/callback";

/** A tools/call of `ask` as a 2025-11-25 client sends it, with this Authorization header. */
function askCall(authorization) {
  return {
    headers: { authorization, "service-workspace": "bench", "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question: "How much annual leave do employees get?" } } }),
  };
}

/** An access token the way a client gets one: registration, authorization with PKCE, the consent form (key, workspace), the code redeemed. */
async function accessToken(base) {
  const registered = await (await fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "bench", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }),
  })).json();
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorize = new URL(`${base}/oauth/authorize`);
  const resource = `${base}/oauth/mcp`;
  for (const [name, value] of Object.entries({ response_type: "code", client_id: registered.client_id, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: "S256", resource, scope: "workspace offline_access", state: "s" })) {
    authorize.searchParams.set(name, value);
  }
  const cookies = new Map();
  const go = async (url, init = {}) => {
    const response = await fetch(url, { ...init, redirect: "manual", headers: { ...init.headers, cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      cookies.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    return response;
  };
  let response = await go(authorize);
  while (response.status === 303 || response.status === 302) response = await go(new URL(response.headers.get("location"), base));
  const submit = async (html, fields) => {
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(html)[1], base);
    const body = new URLSearchParams(fields);
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) body.set(name, value.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code))));
    return go(action, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
  };
  const chooser = await submit(await response.text(), { key: KEY, action: "continue" });
  response = await submit(await chooser.text(), { workspace: "bench", action: "allow" });
  let location = new URL(response.headers.get("location"), base);
  while (location.origin === new URL(base).origin) location = new URL((await go(location)).headers.get("location"), base);
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code: ${location.href}`);
  const tokens = await (await fetch(`${base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT_URI, client_id: registered.client_id, resource }),
  })).json();
  return tokens.access_token;
}

/** The cost of a tool call over OAuth, and of OAuth being off. */
export async function oauthCost(start, { seconds, repeats }) {
  const upstream = await start("instant-upstream.mjs");
  const off = await start("adapter-process.mjs", { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER });
  const on = await start("adapter-process.mjs", { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER, MCP_OAUTH: "on" });
  const token = await accessToken(on.url);
  const kinds = {
    keyOauthOff: { adapter: off, url: `${off.url}/mcp`, ...askCall(`Bearer ${KEY}`) },
    keyOauthOn: { adapter: on, url: `${on.url}/mcp`, ...askCall(`Bearer ${KEY}`) },
    token: { adapter: on, url: `${on.url}/oauth/mcp`, ...askCall(`Bearer ${token}`) },
  };
  const once = async (kind, duration, connections) => {
    const before = await statsOf(kind.adapter.child);
    const result = await autocannon({ url: kind.url, method: "POST", headers: kind.headers, body: kind.body, connections, duration });
    const after = await statsOf(kind.adapter.child);
    if (result.errors || result.non2xx) throw new Error(`${kind.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
    const requests = after.requests - before.requests;
    return { rps: result.requests.average, cpuUs: (after.cpuMicros - before.cpuMicros) / requests };
  };
  for (const kind of Object.values(kinds)) await once(kind, 2, 50); // warm-up, discarded
  const rounds = [];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const figures = {};
    // CPU under load (50 connections); latency one call at a time (one connection, µs).
    for (const [name, kind] of Object.entries(kinds)) {
      const latencies = await sequentialLatencies(kind.url, { headers: kind.headers, body: kind.body, count: 500 });
      figures[name] = { ...(await once(kind, seconds, 50)), sequentialP50Us: median(latencies) };
    }
    rounds.push(figures);
  }
  for (const { child } of [upstream, off, on]) child.kill();
  const summary = {};
  for (const name of Object.keys(kinds)) {
    summary[name] = {
      rps: round(median(rounds.map((figures) => figures[name].rps)), 0),
      cpuUsPerCall: round(median(rounds.map((figures) => figures[name].cpuUs)), 0),
      sequentialP50Us: round(median(rounds.map((figures) => figures[name].sequentialP50Us)), 0),
      cpuRuns: rounds.map((figures) => round(figures[name].cpuUs, 0)),
    };
  }
  const added = (a, b) => round(median(rounds.map((figures) => figures[a].cpuUs - figures[b].cpuUs)), 0);
  const addedLatency = (a, b) => round(median(rounds.map((figures) => figures[a].sequentialP50Us - figures[b].sequentialP50Us)), 0);
  return {
    ...summary,
    addedCpuUsByToken: added("token", "keyOauthOn"),
    addedLatencyUsByToken: addedLatency("token", "keyOauthOn"),
    addedCpuUsByOauthOn: added("keyOauthOn", "keyOauthOff"),
    addedLatencyUsByOauthOn: addedLatency("keyOauthOn", "keyOauthOff"),
  };
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postFrom } from "../../helpers/post-from.js";
import { HandDrivenClient, pkcePair, REDIRECT_URI } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

const REGISTRATIONS = 3;
const KEY_FAILURES = 3;

/** A dynamic client registration sent from a given loopback address (127.0.0.0/8 is all loopback on Linux), through a proxy's `X-Forwarded-For` when given. */
function registerFrom(base: string, localAddress: string, forwardedFor?: string) {
  const body = JSON.stringify({ client_name: "Limited client", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
  return postFrom(`${base}/oauth/register`, body, localAddress, forwardedFor ? { "x-forwarded-for": forwardedFor } : {});
}

function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name as string] = value as string;
  return fields;
}

const alertOf = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1];

describe("OAuth attempt limits per client address: registrations, and wrong keys at consent", () => {
  let stack: Stack;
  let client: HandDrivenClient;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on", OAUTH_REGISTRATIONS_PER_HOUR: String(REGISTRATIONS), OAUTH_KEY_FAILURES_PER_15_MINUTES: String(KEY_FAILURES) });
    client = await new HandDrivenClient(stack.url).register();
  });
  afterAll(() => stack?.close());

  it("refuses the registration past the limit with 429, Retry-After and an RFC 7591 error body, while another address still registers", async () => {
    for (let index = 0; index < REGISTRATIONS; index++) expect((await registerFrom(stack.url, "127.0.0.3")).status).toBe(201);
    const refused = await registerFrom(stack.url, "127.0.0.3");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(refused.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["error", "error_description"]);
    expect(body.error).toBe("too_many_requests");
    expect(String(body.error_description)).toMatch(/too many client registrations/i);
    // Another address is counted on its own.
    const other = await registerFrom(stack.url, "127.0.0.4");
    expect(other.status).toBe(201);
    expect(JSON.parse(other.body)).toHaveProperty("client_id");
  });

  /** Opens a fresh consent page and submits a typed key: the answer's status, location and alert. */
  async function tryKey(key: string): Promise<{ status: number; location: string | null; html: string; retryAfter: string | null }> {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error(`left to ${opened.left.href}`);
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(opened.html)?.[1] ?? "", opened.pageUrl);
    const body = new URLSearchParams({ ...hiddenFields(opened.html), key, action: "continue" });
    const answer = await client.browser.request(action, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
    return { status: answer.status, location: answer.headers.get("location"), html: await answer.text(), retryAfter: answer.headers.get("retry-after") };
  }

  it("counts only wrong keys; past the limit even the right key is refused with a wait message and no code", async () => {
    for (let index = 0; index < KEY_FAILURES - 1; index++) expect((await tryKey("sk-wrong-guess")).status).toBe(401);
    // Below the limit the right key works (and is not counted as a failure).
    const right = await tryKey(API_KEY);
    expect(right.status).toBe(200);
    expect(right.html).toContain('name="workspace"');
    expect((await tryKey(API_KEY)).status).toBe(200);
    // The last wrong key the window allows.
    const last = await tryKey("sk-wrong-guess");
    expect(last.status).toBe(401);
    expect(alertOf(last.html)).toMatch(/did not accept this key/);
    // Past it: the right key is refused unchecked, as a wrong one is (nothing tells them apart).
    const refusedRight = await tryKey(API_KEY);
    const refusedWrong = await tryKey("sk-another-guess");
    for (const refused of [refusedRight, refusedWrong]) {
      expect(refused.status).toBe(429);
      expect(refused.location).toBeNull();
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(15 * 60);
      expect(alertOf(refused.html)).toMatch(/Too many wrong keys .* Wait \d+ minutes?/);
      expect(refused.html).toContain('type="password"');
      expect(refused.html).not.toContain('name="workspace"');
    }
    expect(alertOf(refusedRight.html)).toBe(alertOf(refusedWrong.html));
  });
});

describe("OAuth attempt limits behind a reverse proxy (TRUSTED_PROXIES)", () => {
  let stack: Stack;
  beforeAll(async () => {
    // 127.0.0.9 plays the proxy; 127.0.0.10 is any other peer.
    stack = await startStack({ MCP_OAUTH: "on", OAUTH_REGISTRATIONS_PER_HOUR: String(REGISTRATIONS), TRUSTED_PROXIES: "127.0.0.9/32" });
  });
  afterAll(() => stack?.close());

  it("counts each client behind the proxy by its X-Forwarded-For address: two clients are limited separately", async () => {
    for (let index = 0; index < REGISTRATIONS; index++) expect((await registerFrom(stack.url, "127.0.0.9", "198.51.100.1")).status).toBe(201);
    expect((await registerFrom(stack.url, "127.0.0.9", "198.51.100.1")).status).toBe(429);
    // Another client through the same proxy; and one whose IPv6 address differs only past its /64 counts with its network.
    expect((await registerFrom(stack.url, "127.0.0.9", "198.51.100.2")).status).toBe(201);
    // The client wrote the left-most hop itself: only the right-most untrusted one counts.
    expect((await registerFrom(stack.url, "127.0.0.9", "203.0.113.77, 198.51.100.1")).status).toBe(429);
    for (let index = 0; index < REGISTRATIONS; index++) expect((await registerFrom(stack.url, "127.0.0.9", `2001:db8:1:2::${index + 1}`)).status).toBe(201);
    expect((await registerFrom(stack.url, "127.0.0.9", "2001:db8:1:2:ffff::9")).status).toBe(429);
  });

  it("ignores the header from a peer that is not a trusted proxy: a spoofed X-Forwarded-For changes nothing", async () => {
    for (let index = 0; index < REGISTRATIONS; index++) expect((await registerFrom(stack.url, "127.0.0.10", `198.51.100.${50 + index}`)).status).toBe(201);
    expect((await registerFrom(stack.url, "127.0.0.10", "198.51.100.99")).status).toBe(429);
    expect((await registerFrom(stack.url, "127.0.0.10")).status).toBe(429);
  });
});

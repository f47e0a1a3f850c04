import { afterAll, beforeAll, expect, it } from "vitest";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// The in-process stores bound each principal (issue 56, security review L7; docs/responses-api.md):
// with RESPONSES_MAX_ENTRIES=4, one key storing a dozen responses, background ones included,
// pushes out its own, never another key's.

const FLOODER = "sk-other-key";
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ RESPONSES_MAX_ENTRIES: "4", REALTIME: "off" });
});
afterAll(() => stack?.close());

/** Creates a response as `key`: its id. */
async function create(key: string, body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${stack.url}/v1/responses`, {
    method: "POST",
    headers: headers({ authorization: `Bearer ${key}` }),
    body: JSON.stringify({ model: "ask", input: "How much annual leave do I get?", ...body }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/** The status of `key`'s GET of response `id`. */
async function retrieved(key: string, id: string): Promise<number> {
  const response = await fetch(`${stack.url}/v1/responses/${id}`, { headers: headers({ authorization: `Bearer ${key}` }) });
  await response.text();
  return response.status;
}

it("keeps a key's stored and background responses while another key stores many more", async () => {
  const stored = await create(API_KEY, {});
  const background = await create(API_KEY, { background: true });
  await waitFor(async () => {
    const response = await fetch(`${stack.url}/v1/responses/${background}`, { headers: headers() });
    return ((await response.json()) as { status: string }).status === "completed";
  }, "the background answer completed");
  const flood: string[] = [];
  for (let index = 0; index < 6; index += 1) flood.push(await create(FLOODER, {}), await create(FLOODER, { background: true }));
  expect([await retrieved(API_KEY, stored), await retrieved(API_KEY, background)]).toEqual([200, 200]);
  // The flooder's oldest went, its newest stay.
  expect(await retrieved(FLOODER, flood[0] as string)).toBe(404);
  expect(await retrieved(FLOODER, flood.at(-2) as string)).toBe(200);
});

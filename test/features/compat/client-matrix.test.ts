import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { MATRIX, type MatrixRow } from "../../compat/clients.js";

// One scenario, every client of the matrix (test/compat/clients.ts), against one adapter in front of
// the embedded workspace: an answer with its citations as the client shows them, a streamed answer,
// a second turn continuing the first's query the way the client continues a conversation, and a
// rejected key raising the client's own error. Each row asks in a workspace of its own, so the
// rows run at once and each still finds its own queries upstream.

const QUESTION = "How much annual leave do I get?";
const NEXT = "Does unused leave carry over?";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({}, { workspaces: MATRIX.map((row) => row.id) });
});
afterAll(() => stack.close());

const connection = (row: MatrixRow, apiKey = API_KEY) => ({ baseURL: `${stack.url}/v1`, apiKey, workspace: row.id });
/** The create bodies the workspace received for a row, in order. */
const creates = (row: MatrixRow) => stack.workspace.control.creates.filter((entry) => entry.workspace === row.id).map((entry) => entry.body);
const label = (row: MatrixRow) => `${row.id} (${row.packages.map((pkg) => `${pkg.name} ${pkg.version}`).join(", ")})`;

describe.concurrent.each(MATRIX.map((row) => [label(row), row] as const))("%s", (_label, row) => {
  it("answers, streams, continues the query and raises its own error for a wrong key", async () => {
    const connect = await row.load();
    const client = connect(connection(row));

    const first = await client.answer(QUESTION);
    expect(first.text).toContain("25 days of paid annual leave");
    expect(first.citations.length).toBeGreaterThan(0);
    expect(first.citations.some((citation) => citation.includes("handbook.md"))).toBe(true);

    const second = await client.followUp(first, QUESTION, NEXT);
    expect(second.text.length).toBeGreaterThan(0);

    const streamed = await client.stream(QUESTION);
    expect(streamed.text).toBe(first.text);
    expect(streamed.citations).toEqual(first.citations);

    // Upstream: the second turn continued the first's query; the streamed question was a query of its own.
    const [answer, followUp, stream] = creates(row);
    expect(followUp?.content).toBe(NEXT);
    expect(followUp?.id).toBe(answer?.id);
    expect(stream?.id).not.toBe(answer?.id);

    const error = await connect(connection(row, "sk-wrong-key")).answer(QUESTION).then(() => null, (caught: unknown) => caught);
    expect(client.isAuthError(error), String(error)).toBe(true);
  });
});

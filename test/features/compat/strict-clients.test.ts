import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";
import { type Connection, MATRIX, type MatrixRow } from "../../compat/clients.js";

// @ai-sdk/openai's chat model accepts no chat annotation but url_citation: it fails the whole answer
// on a file_citation ("Invalid JSON response"). The default, url_citation, serves every client; a
// deployment that sets CHAT_ANNOTATIONS=file_citation relies on recognising the AI SDK by its
// User-Agent, which this checks with every line of the SDK as it really calls (its own header).

const AI_SDK_CHAT = MATRIX.filter((row) => row.client.includes("`@ai-sdk/openai`") && row.api === "chat");
const QUESTION = "How much annual leave do I get?";

let stack: Stack;
let fileCitations: RunningAdapter;
beforeAll(async () => {
  stack = await startStack({}, { workspaces: ["acme"] });
  fileCitations = await startAdapter(stack.workspace.url, { CHAT_ANNOTATIONS: "file_citation" });
});
afterAll(async () => {
  await fileCitations.close();
  await stack.close();
});

/** A fetch that sends `userAgent` instead of what the client says, as an AI SDK without a token of its own did. */
const sendingUserAgent = (userAgent: string): typeof fetch => (input, init) =>
  fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), "user-agent": userAgent } });

const connection = (url: string, extra: Partial<Connection> = {}): Connection => ({ baseURL: `${url}/v1`, apiKey: API_KEY, workspace: "acme", ...extra });

describe.concurrent.each(AI_SDK_CHAT.map((row) => [row.id, row] as const))("%s", (_id, row: MatrixRow) => {
  it("is recognised where the deployment sends file_citation, and reads its url_citation sources, plain and streamed", async () => {
    const client = (await row.load())(connection(fileCitations.url));
    for (const turn of [await client.answer(QUESTION), await client.stream(QUESTION)]) {
      expect(turn.text).toContain("25 days");
      expect(turn.citations).toContain("urn:workspace-document:acme:handbook.md");
    }
  });

  it("reads the default answer when its User-Agent names nothing (`node`, as @ai-sdk/openai 2.0.29 and before sent), and fails on file_citation", async () => {
    const connect = await row.load();
    const unknown = { fetch: sendingUserAgent("node") };
    const answer = await connect(connection(stack.url, unknown)).answer(QUESTION);
    expect(answer.citations).toContain("urn:workspace-document:acme:handbook.md");
    // Why the default is url_citation: this provider's schema takes no other chat annotation.
    await expect(connect(connection(fileCitations.url, unknown)).answer(QUESTION)).rejects.toThrow("Invalid JSON response");
  });
});

import { afterAll, beforeAll, expect, it } from "vitest";
import { HandDrivenClient, pkcePair } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { createReasonTask, mcpClientAs } from "../../helpers/tenancy.js";

// One MCP endpoint with MCP_OAUTH=on (issue 56, code review §2.4 #5): `/mcp` and `/oauth/mcp` are
// one handler, so one set of tasks and one count per credential. A key that runs its one task
// (MCP_TASKS_PER_CREDENTIAL=1) through `/mcp` is at its cap through an OAuth grant of the same key
// too, and the other way round.

let stack: Stack;
let token: string;

beforeAll(async () => {
  // Slow steps: a task is still running when the next is asked for.
  stack = await startStack({ MCP_OAUTH: "on", MCP_TASKS_PER_CREDENTIAL: "1", MCP_TASK_POLL_INTERVAL_MS: "100", REALTIME: "off" }, { stepDelayMs: 300 });
  const client = await new HandDrivenClient(stack.url).register();
  const { verifier, challenge } = pkcePair();
  const callback = await client.authorize(challenge, API_KEY);
  const tokens = await client.exchange(callback.searchParams.get("code") ?? "", verifier);
  expect(tokens.status).toBe(200);
  token = tokens.body.access_token as string;
});
afterAll(() => stack.close());

it("counts a credential's tasks once, whether they came through /mcp or through its OAuth grant", async () => {
  const plain = await mcpClientAs(stack.url, API_KEY);
  const granted = await mcpClientAs(stack.url, token, {}, "/oauth/mcp");
  try {
    const first = await createReasonTask(plain, "How much annual leave do I get?");
    expect(first.task.status).toBe("working");
    await expect(createReasonTask(granted, "What is the travel policy?")).rejects.toThrow(/Too many tasks running for this credential \(1/);
    await plain.experimental.tasks.cancelTask(first.task.taskId);
  } finally {
    await Promise.all([plain.close(), granted.close()]);
  }
});

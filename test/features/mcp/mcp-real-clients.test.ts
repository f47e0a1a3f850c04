import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { getAllMcpTools, MCPServerStreamableHttp, RunContext } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

// The clients people use, as they use them, against the adapter over loopback: the OpenAI Agents
// SDK's MCPServerStreamableHttp (no model needed to list and call tools) and the MCP Inspector's
// command line, run headless as a child process.
const run = promisify(execFile);
let stack: Stack;
let home: string;
const inspector = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/inspector/package.json")), "clients/launcher/build/index.js");

beforeAll(async () => {
  stack = await startStack();
  // The Inspector keeps a catalog and client settings under HOME: a scratch one, removed after.
  home = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
});
afterAll(async () => {
  await stack.close();
  rmSync(home, { recursive: true, force: true });
});

describe("the OpenAI Agents SDK's MCPServerStreamableHttp", () => {
  it("lists the tools and calls them; the model would see the Markdown answer with its Sources", async () => {
    const server = new MCPServerStreamableHttp({
      url: `${stack.url}/mcp`,
      name: "workspace",
      requestInit: { headers: { Authorization: `Bearer ${API_KEY}`, "Service-Workspace": "acme" } },
    });
    await server.connect();
    try {
      const tools = await server.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["ask", "reason", "build", "search", "fetch"]);
      const content = await server.callTool("ask", { question: "How are security incidents reported?" });
      expect(content).toHaveLength(1);
      expect(content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/within one hour[\s\S]*\n\nSources:\n\[1\] security-policy\.md/) });

      // What an agent's model receives when it calls the tool: the function tool the SDK builds from it.
      const functionTools = await getAllMcpTools({ mcpServers: [server], runContext: new RunContext({}), agent: undefined as never });
      const reason = functionTools.find((tool) => tool.name === "reason") as { invoke: (context: RunContext, input: string) => Promise<unknown> };
      const output = await reason.invoke(new RunContext({}), JSON.stringify({ question: "What are the rules for expenses?" }));
      expect(JSON.stringify(output)).toMatch(/Sources:\\n\[1\] /);
    } finally {
      await server.close();
    }
  });
});

describe("the MCP Inspector's command line, headless", () => {
  const cli = (args: string[]) =>
    run(process.execPath, [inspector, "--cli", `${stack.url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${API_KEY}`, "--header", "Service-Workspace: acme", "--format", "json", ...args], {
      env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "catalog.json"), MCP_CLIENT_CONFIG_PATH: join(home, "client.json") },
      timeout: 60_000,
    });

  it.each(["legacy", "modern"])("calls ask (protocol era %s)", async (era) => {
    const called = JSON.parse((await cli(["--protocol-era", era, "--method", "tools/call", "--tool-name", "ask", "--tool-args-json", JSON.stringify({ question: "How are security incidents reported?" })])).stdout);
    expect(called.result.structuredContent.answer).toContain("within one hour");
    expect(called.result.content[0].text).toMatch(/Sources:\n\[1\] security-policy\.md/);
  });

  it("exits 5 on a tool error, printing the workspace's message", async () => {
    const failure = await cli(["--method", "tools/call", "--tool-name", "ask", "--tool-args-json", JSON.stringify({ question: "leave [fault:failed]" })]).catch((error: { code: number; stdout: string }) => error);
    expect((failure as { code: number }).code).toBe(5);
    expect(JSON.parse((failure as { stdout: string }).stdout).result).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^The workspace query \S+ failed/) }] });
  });
});

import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { load as loadYaml } from "js-yaml";
import { configSchema } from "librechat-data-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { defaultDocuments, type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../../src/util/package-info.js";
import { connectMcp } from "../../helpers/mcp-clients.js";
import { responsesErrors } from "../../helpers/openai-schemas.js";
import { type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// Every recipe of the README and docs/ is a file in examples/, written into the page by `npm run
// docs` and run here against a real server (the embedded workspace over this project's own docs, as
// `npm start` serves it).
const root = projectRoot();
const run = promisify(execFile);
let workspace: RunningWorkspace;
let adapter: RunningAdapter;
let environment: Record<string, string>;

beforeAll(async () => {
  workspace = await startEmbeddedWorkspace({ workspaces: ["demo"], stepDelayMs: 5 });
  // As `npm start` runs it: the embedded workspace's documents served for citation links.
  let listening = "";
  adapter = await startAdapter(workspace.url, {}, undefined, { documents: documentReader(defaultDocuments()), publicUrl: () => listening });
  listening = adapter.url;
  environment = { ...process.env, ADAPTER_URL: `${adapter.url}/v1`, MCP_URL: `${adapter.url}/mcp`, WORKSPACE_API_KEY: "any-key", WORKSPACE_ID: "demo" } as Record<string, string>;
  // The recipes never reach OpenAI: without a key the Agents SDK recipe stops before its model.
  delete environment.OPENAI_API_KEY;
  delete environment.OPENAI_BASE_URL;
});
afterAll(async () => {
  await adapter.close();
  await workspace.close();
});

const example = (name: string) => readFileSync(join(root, "examples", name), "utf8");
const read = (page: string) => readFileSync(join(root, page), "utf8");
const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
/** One of the documents the embedded workspace answers from, as a citation names it (the file's name). */
const DOCUMENT = `(?:${pages.map((page) => page.slice(page.lastIndexOf("/") + 1).replaceAll(".", "\\.")).join("|")})`;

/** Where each file of examples/ is shown. */
const SHOWN_IN: Record<string, string[]> = {
  "quickstart.mjs": ["README.md"],
  "curl.sh": ["docs/clients.md"],
  "openai-sdk.mjs": ["docs/clients.md"],
  "openai-sdk-responses.mjs": ["docs/clients.md"],
  "openai_sdk.py": ["docs/clients.md"],
  "openai-agents.mjs": ["docs/clients.md"],
  "langchain.mjs": ["docs/clients.md"],
  "langchain-responses.mjs": ["docs/clients.md"],
  "vercel-ai-sdk.mjs": ["docs/clients.md"],
  "vercel-ai-sdk-chat.mjs": ["docs/clients.md"],
  "vercel-ai-sdk-responses.mjs": ["docs/clients.md"],
  "librechat.yaml": ["docs/chat-uis.md"],
  "mcp-claude-code.sh": ["README.md", "docs/mcp.md"],
  "mcp-cursor.json": ["docs/mcp.md"],
  "mcp-vscode.json": ["docs/mcp.md"],
  "openai-agents-mcp.mjs": ["docs/mcp.md"],
  "openai-responses-mcp.mjs": ["docs/mcp.md"],
};

/** A recipe as `npm run docs` writes it (scripts/write-docs.mjs): marker, the file fenced, end marker. */
const FENCES: Record<string, string> = { sh: "sh", mjs: "js", py: "python", yaml: "yaml", json: "json" };
const recipeBlock = (name: string) =>
  `<!-- recipe:examples/${name} -->\n\`\`\`${FENCES[name.slice(name.lastIndexOf(".") + 1)]}\n${example(name).trim()}\n\`\`\`\n<!-- recipe:end -->`;

describe("recipes", () => {
  it("shows every file of examples/ in the docs", () => {
    expect(readdirSync(join(root, "examples")).sort()).toEqual(Object.keys(SHOWN_IN).sort());
  });

  it.each(Object.entries(SHOWN_IN).flatMap(([name, shownIn]) => shownIn.map((page) => [page, name])))(
    "%s shows %s as it is in examples/ (`npm run docs` writes it)",
    (page, name) => {
      expect(read(page)).toContain(recipeBlock(name));
    },
  );

  it("has no recipe block in README.md or docs/ that differs from its file", () => {
    const blocks = pages.flatMap((page) =>
      [...read(page).matchAll(/<!-- recipe:examples\/(\S+) -->\n[\s\S]*?<!-- recipe:end -->/g)].map(([block, name]) => ({ page, name, block })),
    );
    expect(blocks.length).toBeGreaterThanOrEqual(Object.values(SHOWN_IN).flat().length);
    for (const { page, name, block } of blocks) expect(block, `${page}: examples/${name}`).toBe(recipeBlock(name as string));
  });

  it("the quickstart: the answer with its markers and Sources", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/quickstart.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/\[1\]/);
    expect(stdout).toMatch(/Sources:\n\[1\] /);
  });

  it("curl: a plain and a streamed completion", async () => {
    const { stdout } = await run("bash", [join(root, "examples/curl.sh")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/"object":"chat\.completion"/);
    expect(stdout).toMatch(/"url_citation"/);
    expect(stdout).toMatch(/"reasoning_content"/);
    expect(stdout.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("the OpenAI SDK for JavaScript: content, citations, usage and a stream", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/openai-sdk.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/cites .+ <http:\/\/127\.0\.0\.1:\d+\/documents\/demo\/\S+> at \d+-\d+/);
    expect(stdout).toMatch(/usage: \{[\s\S]*total_tokens/);
    expect(stdout).toMatch(/Using tool: search_documents/);
  });

  it("LangChain JS: invoke and stream", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/langchain.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/Sources:\n\[1\] /);
    expect(stdout.split("Sources:").length).toBeGreaterThanOrEqual(3);
  });

  it("the Vercel AI SDK: generateText and streamText", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/vercel-ai-sdk.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/Sources:\n\[1\] /);
    expect(stdout).toMatch(/usage: \{[\s\S]*(inputTokens|promptTokens)/);
  });

  it("the Vercel AI SDK's OpenAI chat model with default settings: text and sources, plain and streamed", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/vercel-ai-sdk-chat.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/source: .+ <http:\/\/127\.0\.0\.1:\d+\/documents\/demo\/\S+>/);
    expect(stdout).toMatch(/\n[1-9]\d* sources/);
  });

  it("the OpenAI SDK on the Responses API: citations, a follow-up, a stream and the stored response", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/openai-sdk-responses.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(new RegExp(`cites .+ <http://127\\.0\\.0\\.1:\\d+/documents/demo/${DOCUMENT}(?:[?#]\\S*)?> at \\d+-\\d+`));
    expect(stdout).toMatch(/usage: \{[\s\S]*input_tokens/);
    expect(stdout).toMatch(/follow-up: \S/);
    expect(stdout).toMatch(/Using tool: search_documents/);
    expect(stdout).toMatch(/stored as resp_\w+: completed/);
  });

  it("the OpenAI Agents SDK: a run and a streamed run", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/openai-agents.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout.split("Sources:").length).toBeGreaterThanOrEqual(3);
  });

  it("the Vercel AI SDK on the Responses API: sources, a second turn, reasoning in a stream", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/vercel-ai-sdk-responses.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(new RegExp(`source: .+ <http://127\\.0\\.0\\.1:\\d+/documents/demo/${DOCUMENT}(?:[?#]\\S*)?>`));
    expect(stdout).toMatch(/second turn: \S/);
    expect(stdout).toMatch(/Using tool: search_documents/);
  });

  it("LangChain JS on the Responses API: invoke and stream", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/langchain-responses.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout.split("Sources:").length).toBeGreaterThanOrEqual(3);
  });

  it("the OpenAI SDK for Python: compiles (the SDK cannot be installed on this machine to run it)", async () => {
    await run("python3", ["-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", join(root, "examples/openai_sdk.py")]);
  });

  it("LibreChat: the custom endpoint passes LibreChat's own config schema and behaves as LibreChat calls it", async () => {
    const config = loadYaml(example("librechat.yaml")) as any;
    const parsed = configSchema.safeParse(config);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    const endpoint = config.endpoints.custom[0];
    expect(endpoint.models.fetch).toBe(true);
    expect(endpoint.titleConvo).toBe(true);
    expect(endpoint.titleMethod).toBe("completion");

    // LibreChat substitutes ${VAR} from its environment and {{LIBRECHAT_BODY_CONVERSATIONID}} per request.
    const headersFor = (conversationId: string) =>
      Object.fromEntries(
        Object.entries(endpoint.headers as Record<string, string>).map(([name, value]) => [
          name,
          value.replace("${WORKSPACE_ID}", "demo").replace("{{LIBRECHAT_BODY_CONVERSATIONID}}", conversationId),
        ]),
      );
    const models = await fetch(`${adapter.url}/v1/models`, { headers: { authorization: "Bearer any-key", ...headersFor("c") } });
    expect(((await models.json()) as any).data.map((model: { id: string }) => model.id)).toContain("demo/ask");
    const ask = (content: string, conversationId: string) =>
      fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer any-key", "content-type": "application/json", ...headersFor(conversationId) },
        body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content }] }),
      });
    const first = await ask("How does the adapter cite sources?", "7c1f0b8e-convo");
    await first.text();
    const second = await ask("And how are streams ended?", "7c1f0b8e-convo");
    const streamed = await second.text();
    // Citations as Markdown links LibreChat shows: a Sources list linking to the document page.
    const content = streamed
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)).choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toMatch(/\*\*Sources\*\*\n- \[[^\]]+\]\(http:\/\/127\.0\.0\.1:\d+\/documents\/demo\//);
    expect(second.headers.get("service-query-id")).toBe(first.headers.get("service-query-id"));

    // titleConvo: LibreChat's title request (@librechat/agents, titleMethod completion: one user
    // message, not streamed) with the endpoint's headers: answered by the adapter, the thread untouched.
    const turns = workspace.control.creates.length;
    const title = await fetch(`${adapter.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer any-key", "content-type": "application/json", ...headersFor("7c1f0b8e-convo") },
      body: JSON.stringify({
        model: "ask",
        messages: [{ role: "user", content: `Provide a concise, 5-word-or-less title for the conversation, using title case conventions. Only return the title itself.\n\nConversation:\nUser: How does the adapter cite sources?\nAI: ${content}` }],
      }),
    });
    expect(((await title.json()) as any).choices[0].message.content).toBe("How does the adapter cite sources");
    expect(workspace.control.creates.length).toBe(turns);
    const third = await ask("And what happens when a query fails?", "7c1f0b8e-convo");
    await third.text();
    expect(third.headers.get("service-query-id")).toBe(first.headers.get("service-query-id"));
  });

  it("Claude Code: `claude mcp add` gets the endpoint and headers a real client then uses", async () => {
    // A stand-in for the `claude` command that records what it was asked to add.
    const bin = mkdtempSync(join(tmpdir(), "claude-"));
    try {
      writeFileSync(join(bin, "claude"), "#!/usr/bin/env node\nconsole.log(JSON.stringify(process.argv.slice(2)));\n");
      chmodSync(join(bin, "claude"), 0o755);
      const { stdout } = await run("bash", [join(root, "examples/mcp-claude-code.sh")], { env: { ...environment, PATH: `${bin}:${environment.PATH}` }, timeout: 20_000 });
      const args = JSON.parse(stdout) as string[];
      expect(args.slice(0, 5)).toEqual(["mcp", "add", "--transport", "http", "workspace"]);
      expect(args[5]).toBe(`${adapter.url}/mcp`);
      const headers = Object.fromEntries(args.slice(6).filter((_, index) => index % 2 === 1).map((header) => header.split(": ") as [string, string]));
      expect(headers).toEqual({ Authorization: "Bearer any-key", "Service-Workspace": "demo" });
      const client = await connectMcp("2025-11-25", args[5] as string, headers);
      expect((await client.callTool("ask", { question: "How does the adapter cite sources?" })).content[0].text).toMatch(/\n\nSources:\n\[1\] /);
      await client.close();
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("Cursor and VS Code: the JSON configurations parse, point at the MCP route and authenticate as written", async () => {
    const cursor = JSON.parse(example("mcp-cursor.json")).mcpServers.workspace;
    const vscode = JSON.parse(example("mcp-vscode.json"));
    const code = vscode.servers.workspace;
    expect(code.type).toBe("http");
    expect(vscode.inputs).toEqual([expect.objectContaining({ id: "workspace-api-key", type: "promptString", password: true })]);
    // Each client substitutes its variables (Cursor `${env:…}`, VS Code `${input:…}`) before it connects.
    const substitute = (headers: Record<string, string>) =>
      Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value.replace("${env:WORKSPACE_API_KEY}", "any-key").replace("${input:workspace-api-key}", "any-key")]));
    for (const [server, path] of [[cursor, "/mcp"], [code, "/mcp/demo"]] as const) {
      const url = new URL(server.url);
      expect(`${url.origin}${url.pathname}`).toBe(`http://localhost:8080${path}`);
      const client = await connectMcp("2025-11-25", `${adapter.url}${path}`, substitute(server.headers));
      const result = await client.callTool("search", { query: "citations" });
      expect(result.structuredContent.results.length).toBeGreaterThan(0);
      await client.close();
    }
  });

  it("the OpenAI Agents SDK: the workspace's tools listed and called (the agent's model is left out without OPENAI_API_KEY)", async () => {
    const { stdout } = await run(process.execPath, [join(root, "examples/openai-agents-mcp.mjs")], { env: environment, timeout: 20_000 });
    expect(stdout).toMatch(/^tools: ask, reason, build, search, fetch\n/);
    expect(stdout).toMatch(/\n\nSources:\n\[1\] .+ <http:\/\/127\.0\.0\.1:\d+\/documents\/demo\//);
  });

  it("the Responses API's mcp tool: a valid tool, whose server a caller in OpenAI's place lists and calls", async () => {
    // This test plays OpenAI's side: it reads the request the recipe sends, checks its `mcp` tool
    // against OpenAI's published schema, and does what OpenAI's servers do with it.
    const problems: string[] = [];
    const openai = createServer((request, response) => {
      let text = "";
      request.on("data", (chunk: Buffer) => (text += chunk.toString()));
      request.on("end", async () => {
        const body = JSON.parse(text);
        const tool = body.tools[0];
        problems.push(...responsesErrors("MCPTool", tool));
        const client = await connectMcp("2025-11-25", tool.server_url, tool.headers);
        const tools = (await client.listTools()).filter((listed) => tool.allowed_tools.includes(listed.name));
        const args = { question: body.input };
        const result = await client.callTool("ask", args);
        await client.close();
        const listed = { type: "mcp_list_tools", id: "mcpl_1", server_label: tool.server_label, tools: tools.map((listedTool) => ({ name: listedTool.name, description: listedTool.description, input_schema: listedTool.inputSchema, annotations: listedTool.annotations })) };
        const call = { type: "mcp_call", id: "mcp_1", server_label: tool.server_label, name: "ask", arguments: JSON.stringify(args), output: result.content[0].text, error: null, status: "completed" };
        problems.push(...responsesErrors("MCPListTools", listed), ...responsesErrors("MCPToolCall", call));
        const message = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "The workspace answered.", annotations: [] }] };
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ id: "resp_1", object: "response", created_at: 0, status: "completed", model: body.model, output: [listed, call, message] }));
      });
    });
    await new Promise<void>((resolve) => openai.listen(0, "127.0.0.1", resolve));
    try {
      const env = { ...environment, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `http://127.0.0.1:${(openai.address() as AddressInfo).port}/v1` };
      const { stdout } = await run(process.execPath, [join(root, "examples/openai-responses-mcp.mjs")], { env, timeout: 20_000 });
      expect(problems).toEqual([]);
      expect(stdout).toMatch(/^ask → [\s\S]+\n\nSources:\n\[1\] /);
      expect(stdout.trim().endsWith("The workspace answered.")).toBe(true);
    } finally {
      openai.closeAllConnections();
      await new Promise((resolve) => openai.close(resolve));
    }
  });
});

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { load as loadYaml } from "js-yaml";
import { configSchema } from "librechat-data-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../src/embedded-workspace/read-document.js";
import { defaultDocuments, type RunningWorkspace, startEmbeddedWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../src/util/package-info.js";
import { type RunningAdapter, startAdapter } from "../helpers/start-stack.js";

// Every recipe of the README is a file in examples/, run here against a real server (the embedded
// workspace over this project's own docs, as `npm start` serves it).
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
  environment = { ...process.env, ADAPTER_URL: `${adapter.url}/v1`, WORKSPACE_API_KEY: "any-key", WORKSPACE_ID: "demo" } as Record<string, string>;
});
afterAll(async () => {
  await adapter.close();
  await workspace.close();
});

const readme = readFileSync(join(root, "README.md"), "utf8");
const example = (name: string) => readFileSync(join(root, "examples", name), "utf8");

describe("recipes", () => {
  it.each([
    "curl.sh",
    "openai-sdk.mjs",
    "openai_sdk.py",
    "langchain.mjs",
    "vercel-ai-sdk.mjs",
    "librechat.yaml",
    "vercel-ai-sdk-chat.mjs",
    "openai-sdk-responses.mjs",
    "openai-agents.mjs",
    "vercel-ai-sdk-responses.mjs",
    "langchain-responses.mjs",
  ])(
    "the README shows %s as it is in examples/",
    (name) => {
      expect(readme).toContain(example(name).trim());
    },
  );

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
    expect(stdout).toMatch(/cites README\.md \(file-[0-9a-f]+\) at \d+/);
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
    expect(stdout).toMatch(/source: README\.md/);
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
    expect(endpoint.titleConvo).toBe(false);

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
  });
});

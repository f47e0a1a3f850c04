import type { OutgoingRequest } from "./transports.js";

/** The languages the developer view copies a request as. */
export type SnippetKind = "curl" | "openai-js" | "openai-python" | "vercel";

/**
 * The MCP configuration for the workspace on the page (the tools `ask`, `reason`, `build`,
 * `search`, `fetch`): Claude Code's command, Cursor's `mcp.json` (clients that take a URL and
 * headers), and VS Code's, which names the workspace in the path. The key is a placeholder each
 * client fills in from where it keeps secrets.
 */
export function mcpSnippet(origin: string, workspace: string): string {
  const url = `${origin}/mcp`;
  const workspaceHeader = workspace ? { "Service-Workspace": workspace } : {};
  const cursor = { mcpServers: { workspace: { url, headers: { Authorization: "Bearer ${env:WORKSPACE_API_KEY}", ...workspaceHeader } } } };
  const vscode = {
    inputs: [{ type: "promptString", id: "workspace-api-key", description: "Workspace API key", password: true }],
    servers: {
      workspace: { type: "http", url: workspace ? `${url}/${encodeURIComponent(workspace)}` : url, headers: { Authorization: "Bearer ${input:workspace-api-key}" } },
    },
  };
  return [
    "# Claude Code",
    `claude mcp add --transport http workspace ${url} \\`,
    `  --header "Authorization: Bearer $WORKSPACE_API_KEY"${workspace ? ` \\\n  --header "Service-Workspace: ${workspace}"` : ""}`,
    "",
    "# Cursor (.cursor/mcp.json), and other clients that take a URL and headers",
    JSON.stringify(cursor, null, 2),
    "",
    "# VS Code (.vscode/mcp.json)",
    JSON.stringify(vscode, null, 2),
  ].join("\n");
}

/**
 * The same request as code a user can run: the key is a placeholder (`$WORKSPACE_API_KEY`),
 * never the one typed into the page; the adapter's address is the page's own.
 */
export function snippet(kind: SnippetKind, api: "chat" | "responses", request: OutgoingRequest, origin: string): string {
  const base = `${origin}/v1`;
  const workspace = request.headers["service-workspace"] ?? "";
  const body = request.body;
  const question =
    api === "chat"
      ? String((body.messages as { content: string }[]).at(-1)?.content ?? "")
      : String(body.input ?? "");
  const model = String(body.model);
  const js = (value: unknown) => JSON.stringify(value);
  switch (kind) {
    case "curl": {
      const lines = [
        `curl -sN ${base}${request.url.replace(/^\/v1/, "")} \\`,
        "  -H \"Authorization: Bearer $WORKSPACE_API_KEY\" \\",
        ...(workspace ? [`  -H "Service-Workspace: ${workspace}" \\`] : []),
        "  -H \"Content-Type: application/json\" \\",
        `  -d '${JSON.stringify(body).replaceAll("'", "'\\''")}'`,
      ];
      return lines.join("\n");
    }
    case "openai-js":
      return [
        "import OpenAI from \"openai\";",
        "",
        "const client = new OpenAI({",
        `  baseURL: ${js(base)},`,
        "  apiKey: process.env.WORKSPACE_API_KEY,",
        `  defaultHeaders: { "Service-Workspace": ${js(workspace)} },`,
        "});",
        api === "chat"
          ? `const stream = await client.chat.completions.create(${JSON.stringify(body, null, 2)});\nfor await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? "");`
          : `const stream = client.responses.stream({ model: ${js(model)}, input: ${js(question)}${body.previous_response_id ? `, previous_response_id: ${js(body.previous_response_id)}` : ""} });\nstream.on("response.output_text.delta", (event) => process.stdout.write(event.delta));\nawait stream.finalResponse();`,
      ].join("\n");
    case "openai-python":
      return [
        "import os",
        "from openai import OpenAI",
        "",
        `client = OpenAI(base_url=${js(base)}, api_key=os.environ["WORKSPACE_API_KEY"], default_headers={"Service-Workspace": ${js(workspace)}})`,
        api === "chat"
          ? `stream = client.chat.completions.create(model=${js(model)}, stream=True, messages=${JSON.stringify(body.messages)})\nfor chunk in stream:\n    if chunk.choices and chunk.choices[0].delta.content:\n        print(chunk.choices[0].delta.content, end="")`
          : `with client.responses.stream(model=${js(model)}, input=${js(question)}) as stream:\n    for event in stream:\n        if event.type == "response.output_text.delta":\n            print(event.delta, end="")`,
      ].join("\n");
    case "vercel":
      return [
        "import { createOpenAI } from \"@ai-sdk/openai\";",
        "import { streamText } from \"ai\";",
        "",
        `const workspace = createOpenAI({ baseURL: ${js(base)}, apiKey: process.env.WORKSPACE_API_KEY, headers: { "Service-Workspace": ${js(workspace)} } });`,
        `const result = streamText({ model: workspace${api === "chat" ? ".chat" : ""}(${js(model)}), prompt: ${js(question)} });`,
        "for await (const text of result.textStream) process.stdout.write(text);",
        "console.log(await result.sources);",
      ].join("\n");
  }
}

// The OpenAI Agents SDK for JavaScript: the workspace as a tool (MCP) of an agent on another model.
import { Agent, MCPServerStreamableHttp, run, setTracingDisabled } from "@openai/agents";

setTracingDisabled(true);

const workspace = new MCPServerStreamableHttp({
  name: "workspace",
  url: process.env.MCP_URL ?? "http://localhost:8080/mcp",
  requestInit: {
    headers: {
      Authorization: `Bearer ${process.env.WORKSPACE_API_KEY ?? "any-key-works-locally"}`,
      "Service-Workspace": process.env.WORKSPACE_ID ?? "demo",
    },
  },
});
await workspace.connect();
try {
  console.log("tools:", (await workspace.listTools()).map((tool) => tool.name).join(", "));
  // What the agent's model gets back from the tool: the answer, its Sources list, its query_id.
  const [answer] = await workspace.callTool("ask", { question: "How does the adapter cite sources?" });
  console.log(answer.text);

  if (process.env.OPENAI_API_KEY) {
    const agent = new Agent({
      name: "Assistant",
      model: "gpt-5-mini",
      instructions: "Answer from the workspace tools, keeping their [n] citations and Sources list.",
      mcpServers: [workspace],
    });
    const result = await run(agent, "What happens when a workspace query fails?");
    console.log(result.finalOutput);
  }
} finally {
  await workspace.close();
}

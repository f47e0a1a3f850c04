// The Responses API's `mcp` tool: OpenAI's model calls the workspace itself. OpenAI's servers
// connect to MCP_URL, so it must be the adapter's public address (PUBLIC_URL), over HTTPS.
import OpenAI from "openai";

const openai = new OpenAI(); // OPENAI_API_KEY
const response = await openai.responses.create({
  model: "gpt-5",
  tools: [
    {
      type: "mcp",
      server_label: "workspace",
      server_description: "The team's document workspace: grounded answers with cited sources.",
      server_url: process.env.MCP_URL ?? "https://adapter.example.com/mcp",
      headers: {
        Authorization: `Bearer ${process.env.WORKSPACE_API_KEY}`,
        "Service-Workspace": process.env.WORKSPACE_ID ?? "demo",
      },
      allowed_tools: ["ask", "reason", "search", "fetch"],
      require_approval: "never",
    },
  ],
  input: "How does the adapter cite sources? Ask the workspace, and keep its citations.",
});
for (const item of response.output) {
  if (item.type === "mcp_call") console.log(`${item.name} → ${item.error ?? item.output}`);
}
console.log(response.output_text);

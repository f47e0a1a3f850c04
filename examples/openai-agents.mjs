// The OpenAI Agents SDK for JavaScript: an agent whose model is a workspace mode.
import { Agent, OpenAIResponsesModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";

// Traces go to api.openai.com by default; a workspace adapter has no use for them.
setTracingDisabled(true);

const client = new OpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});
const agent = new Agent({
  name: "Workspace",
  instructions: "Answer from the workspace's documents.",
  model: new OpenAIResponsesModel(client, "ask"),
});

const result = await run(agent, "How does the adapter cite sources?");
console.log(result.finalOutput);

const streamed = await run(agent, "What happens when a query fails?", { stream: true });
for await (const text of streamed.toTextStream()) process.stdout.write(text);
await streamed.completed;
console.log();

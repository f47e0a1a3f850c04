// The Vercel AI SDK with @ai-sdk/openai-compatible: generateText, then streamText.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, streamText } from "ai";

const workspace = createOpenAICompatible({
  name: "workspace",
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  headers: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});

const { text, usage } = await generateText({ model: workspace("ask"), prompt: "How does the adapter cite sources?" });
console.log(text);
console.log("usage:", usage);

const result = streamText({ model: workspace("reason"), prompt: "What happens when a query fails?" });
for await (const part of result.textStream) process.stdout.write(part);
console.log();

// The Vercel AI SDK's OpenAI provider on chat completions (@ai-sdk/openai, `.chat()`), with its
// default settings: the adapter's url_citation annotations (the only kind this provider accepts)
// become its sources.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";

const workspace = createOpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  headers: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});

const { text, sources } = await generateText({ model: workspace.chat("ask"), prompt: "How does the adapter cite sources?" });
console.log(text);
for (const source of sources) console.log(`source: ${source.title} <${source.url}>`);

const result = streamText({ model: workspace.chat("reason"), prompt: "What happens when a query fails?" });
for await (const part of result.textStream) process.stdout.write(part);
console.log(`\n${(await result.sources).length} sources`);

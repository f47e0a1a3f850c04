// The Vercel AI SDK with @ai-sdk/openai (the Responses API): text with its sources, a second turn
// that refers to the first by item_reference, then a stream with the steps as reasoning.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";

const openai = createOpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  headers: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});

const question = "How does the adapter cite sources?";
const first = await generateText({ model: openai("ask"), prompt: question });
console.log(first.text);
for (const source of first.sources) console.log(`source: ${source.title} <${source.url}>`);

const second = await generateText({
  model: openai("ask"),
  messages: [{ role: "user", content: question }, ...first.response.messages, { role: "user", content: "And in a stream?" }],
});
console.log("second turn:", second.text.slice(0, 80));

const result = streamText({ model: openai("reason"), prompt: "What happens when a query fails?" });
for await (const part of result.fullStream) {
  if (part.type === "reasoning-delta" || part.type === "text-delta") process.stdout.write(part.text);
}
console.log();

// The official OpenAI SDK for JavaScript: a completion with its citations, then a stream.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});

const completion = await client.chat.completions.create({
  model: "ask",
  messages: [{ role: "user", content: "How does the adapter cite sources?" }],
});
const message = completion.choices[0].message;
console.log(message.content);
for (const { url_citation: citation } of message.annotations ?? []) {
  console.log(`cites ${citation.title} <${citation.url}> at ${citation.start_index}-${citation.end_index}`);
}
console.log("usage:", completion.usage);

const stream = await client.chat.completions.create({
  model: "reason",
  messages: [{ role: "user", content: "What happens when a query fails?" }],
  stream: true,
});
for await (const chunk of stream) {
  const delta = chunk.choices[0]?.delta ?? {};
  process.stdout.write(delta.reasoning_content ?? delta.content ?? "");
}
console.log();

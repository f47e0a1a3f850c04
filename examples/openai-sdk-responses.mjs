// The official OpenAI SDK for JavaScript on the Responses API: a response with its citations, a
// follow-up that continues the same workspace query, a stream, and the stored response.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});

const first = await client.responses.create({ model: "ask", input: "How does the adapter cite sources?" });
console.log(first.output_text);
const message = first.output.find((item) => item.type === "message");
for (const annotation of message?.content[0]?.annotations ?? []) {
  console.log(`cites ${annotation.title} <${annotation.url}> at ${annotation.start_index}-${annotation.end_index}`);
}
console.log("usage:", first.usage);

const followUp = await client.responses.create({
  model: "ask",
  input: "And how are streams ended?",
  previous_response_id: first.id,
});
console.log("follow-up:", followUp.output_text.slice(0, 80));

const stream = client.responses.stream({ model: "reason", input: "What happens when a query fails?" });
stream.on("response.reasoning_summary_text.delta", (event) => process.stdout.write(event.delta));
stream.on("response.output_text.delta", (event) => process.stdout.write(event.delta));
const final = await stream.finalResponse();
console.log(`\nstored as ${final.id}:`, (await client.responses.retrieve(final.id)).status);

// The shortest way in: the OpenAI SDK for JavaScript, pointed at the adapter.
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
});
const completion = await client.chat.completions.create({
  model: "ask", // or "reason", "build"
  messages: [{ role: "user", content: "How does the adapter cite sources?" }],
});
console.log(completion.choices[0].message.content); // the answer, its [1] markers and its Sources

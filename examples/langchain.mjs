// LangChain JS (@langchain/openai): the adapter as a ChatOpenAI model.
import { ChatOpenAI } from "@langchain/openai";

const model = new ChatOpenAI({
  model: "ask",
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  configuration: {
    baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
    defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
  },
});

const answer = await model.invoke("How does the adapter cite sources?");
console.log(answer.content);

for await (const chunk of await model.stream("What happens when a query fails?")) {
  process.stdout.write(String(chunk.content));
}
console.log();

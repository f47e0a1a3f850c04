// LangChain JS (@langchain/openai) on the Responses API.
import { ChatOpenAI } from "@langchain/openai";

const model = new ChatOpenAI({
  model: "ask",
  useResponsesApi: true,
  apiKey: process.env.WORKSPACE_API_KEY ?? "any-key-works-locally",
  configuration: {
    baseURL: process.env.ADAPTER_URL ?? "http://localhost:8080/v1",
    defaultHeaders: { "Service-Workspace": process.env.WORKSPACE_ID ?? "demo" },
  },
});

const answer = await model.invoke("How does the adapter cite sources?");
console.log(answer.text);

for await (const chunk of await model.stream("What happens when a query fails?")) process.stdout.write(chunk.text);
console.log();

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { load as loadCompat } from "compat-clients";

/**
 * The client compatibility matrix (issue 22): every client, at its current major and the majors
 * before it that are still widely installed, each driven the way its users drive it. One scenario
 * (test/features/compat/client-matrix.test.ts) runs on every row; the "Tested clients" table of docs/clients.md is
 * checked against these rows and the installed versions (test/features/compat/tested-clients.test.ts).
 */

/** One answer as a client hands it to its user. */
export interface Turn {
  text: string;
  /** The citations as the client exposes them (annotations, sources, message fields): each as the document name or link it gives. */
  citations: string[];
  /** What the client keeps to continue the conversation (its own message, response, history). */
  state: unknown;
}

/** A client pointed at the adapter. */
export interface Driver {
  answer(question: string): Promise<Turn>;
  stream(question: string): Promise<Turn>;
  /** A second turn after `first`, continued the way this client continues a conversation. */
  followUp(first: Turn, question: string, next: string): Promise<Turn>;
  /** Whether `error` is this client's own error for a rejected key (401). */
  isAuthError(error: unknown): boolean;
}

/** Where and as whom a driver connects. */
export interface Connection {
  baseURL: string;
  apiKey: string;
  workspace: string;
  /** A `fetch` to use instead of the global one (to change what the client sends). */
  fetch?: typeof fetch;
}

/** An installed package a row runs, read from its package.json. */
export interface Installed {
  name: string;
  version: string;
}

/** One row of the matrix. */
export interface MatrixRow {
  /** Short, unique: also the row's workspace name. */
  id: string;
  /** The row of docs/clients.md's Tested clients table it belongs to. */
  client: string;
  /** The packages it runs: the client's own first, then what it runs with (`ai`, `@langchain/core`). */
  packages: Installed[];
  api: "chat" | "responses";
  /** How the client shows the citations, as docs/clients.md says it. */
  shows: string;
  /** Loads the client's packages (only the rows a test runs are loaded) and returns how to connect it. */
  load(): Promise<(connection: Connection) => Driver>;
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** test/compat/clients: the clients whose dependencies cannot sit beside the project's at the root. */
export const COMPAT_CLIENTS = join(ROOT, "test/compat/clients");

/** A package as installed under `alias` in `folder`'s node_modules (the project's, by default). */
export function installed(alias: string, folder = ROOT): Installed {
  const manifest = JSON.parse(readFileSync(join(folder, "node_modules", alias, "package.json"), "utf8")) as { name: string; version: string };
  return { name: manifest.name, version: manifest.version };
}

/** A client package as a row uses it: what is installed, and how to load it. */
interface Package {
  installed: Installed;
  /**
   * Untyped on purpose: the drivers use every client through the narrow interfaces below, and
   * typechecking the older majors' own type trees would add some 4 s to every typecheck.
   */
  load(): Promise<any>;
}

/** A client installed in the project (its own name, or an alias such as `openai-v6`). */
const project = (alias: string): Package => ({ installed: installed(alias), load: () => import(alias) });
/** A client installed in test/compat/clients. */
const compat = (alias: string): Package => ({ installed: installed(alias, COMPAT_CLIENTS), load: () => loadCompat(alias) });

/** The text's own Sources lines (`[1] handbook.md — Leave policy`): all a text-only client shows. */
const textCitations = (text: string) => [...text.matchAll(/^\[\d+\] (.+)$/gm)].map((match) => match[1] as string);

const hasStatus = (error: unknown, status: number) => (error as { status?: unknown }).status === status;

// ---------------------------------------------------------------------------------------------
// The OpenAI SDK for JavaScript: chat completions and the Responses API, plain and streamed.

/** The parts of an `openai` module (any major) the drivers use. */
interface OpenAIModule {
  default: new (options: Record<string, unknown>) => any;
  AuthenticationError: abstract new (...args: never[]) => unknown;
}

function openaiClient(module: OpenAIModule, { baseURL, apiKey, workspace, fetch }: Connection) {
  return new module.default({ baseURL, apiKey, defaultHeaders: { "Service-Workspace": workspace }, maxRetries: 0, ...(fetch ? { fetch } : {}) });
}

/** Chat annotations as the OpenAI SDK types them: `url_citation` with the source's link. */
const urlCitations = (annotations: { type: string; url_citation?: { url: string } }[] | undefined) =>
  (annotations ?? []).flatMap((annotation) => (annotation.url_citation ? [annotation.url_citation.url] : []));

/** Responses `output_text` annotations: `url_citation` with the source's link (the default), or `file_citation` with the file's name. */
const responseCitations = (annotations: { type: string; url?: string; filename?: string }[] | undefined) =>
  (annotations ?? []).flatMap((annotation) => {
    const named = annotation.url ?? annotation.filename;
    return named ? [named] : [];
  });

function openaiChat(module: OpenAIModule): (connection: Connection) => Driver {
  return (connection) => {
    const client = openaiClient(module, connection);
    const complete = async (messages: unknown[]): Promise<Turn> => {
      const completion = await client.chat.completions.create({ model: "ask", messages });
      const message = completion.choices[0].message;
      return { text: message.content, citations: urlCitations(message.annotations), state: message };
    };
    return {
      answer: (question) => complete([{ role: "user", content: question }]),
      async stream(question) {
        const stream = await client.chat.completions.create({ model: "ask", messages: [{ role: "user", content: question }], stream: true });
        let text = "";
        const citations: string[] = [];
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta ?? {};
          text += delta.content ?? "";
          citations.push(...urlCitations(delta.annotations));
        }
        return { text, citations, state: null };
      },
      followUp: (first, question, next) =>
        complete([{ role: "user", content: question }, { role: "assistant", content: first.text }, { role: "user", content: next }]),
      isAuthError: (error) => error instanceof module.AuthenticationError && hasStatus(error, 401),
    };
  };
}

function openaiResponses(module: OpenAIModule): (connection: Connection) => Driver {
  return (connection) => {
    const client = openaiClient(module, connection);
    const turn = (response: any): Turn => {
      const message = response.output.find((item: { type: string }) => item.type === "message");
      return { text: response.output_text, citations: responseCitations(message?.content[0]?.annotations), state: response };
    };
    return {
      answer: async (question) => turn(await client.responses.create({ model: "ask", input: question })),
      async stream(question) {
        // The stream helper: the strictest reader (it throws on any event it does not know). Its
        // final response has no `output_text` before openai 6, so the text is its deltas.
        const stream = client.responses.stream({ model: "ask", input: question });
        let text = "";
        for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
        return { ...turn(await stream.finalResponse()), text };
      },
      followUp: async (first, _question, next) =>
        turn(await client.responses.create({ model: "ask", input: next, previous_response_id: (first.state as { id: string }).id })),
      isAuthError: (error) => error instanceof module.AuthenticationError && hasStatus(error, 401),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// The Vercel AI SDK: `ai` with a provider of the same line.

/** The parts of an `ai` module (any major) the drivers use. */
interface AiModule {
  generateText(options: Record<string, unknown>): Promise<any>;
  streamText(options: Record<string, unknown>): any;
  APICallError: { isInstance(error: unknown): boolean };
}

type Model = (connection: Connection) => unknown;

/** A source as the AI SDK reports it: a URL (chat) or a document's title (Responses). */
const sourceNames = (sources: { sourceType: string; url?: string; title?: string }[]) =>
  sources.map((source) => (source.sourceType === "url" ? (source.url ?? "") : (source.title ?? "")));

/** Where an AI SDK provider shows citations: `sources` parts, the text's own Sources lines, or its text parts' provider metadata. */
type AiSdkCitations = "sources" | "text" | { metadata: string };

/** `url_citation` links kept in the provider metadata of text parts (@ai-sdk/open-responses: `providerMetadata.<name>.annotations`). */
const metadataCitations = (name: string, parts: { type: string; providerMetadata?: Record<string, { annotations?: { url: string }[] }> }[]) =>
  parts.flatMap((part) => (part.type === "text" || part.type === "text-end" ? (part.providerMetadata?.[name]?.annotations ?? []).map((annotation) => annotation.url) : []));

function aiSdk(ai: AiModule, model: Model, citations: AiSdkCitations): (connection: Connection) => Driver {
  const shown = (text: string, sources: { sourceType: string }[], parts: any[]) =>
    citations === "sources" ? sourceNames(sources as never) : citations === "text" ? textCitations(text) : metadataCitations(citations.metadata, parts);
  return (connection) => ({
    async answer(question) {
      const result = await ai.generateText({ model: model(connection), prompt: question, maxRetries: 0 });
      return { text: result.text, citations: shown(result.text, result.sources, result.content ?? []), state: result.response.messages };
    },
    async stream(question) {
      const result = ai.streamText({ model: model(connection), prompt: question, maxRetries: 0 });
      let text = "";
      const errors: unknown[] = [];
      const parts: unknown[] = [];
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") text += part.text;
        if (part.type === "text-end") parts.push(part);
        if (part.type === "error") errors.push(part.error);
      }
      if (errors.length > 0) throw new Error(`the stream had error parts: ${String(errors[0])}`, { cause: errors[0] });
      return { text, citations: shown(text, await result.sources, parts), state: null };
    },
    async followUp(first, question, next) {
      // The AI SDK's history: the user's message, the first result's response messages, the next question.
      const messages = [{ role: "user", content: question }, ...(first.state as unknown[]), { role: "user", content: next }];
      const result = await ai.generateText({ model: model(connection), messages, maxRetries: 0 });
      return { text: result.text, citations: shown(result.text, result.sources, result.content ?? []), state: result.response.messages };
    },
    isAuthError: (error) => ai.APICallError.isInstance(error) && (error as { statusCode?: number }).statusCode === 401,
  });
}

// Each line of the AI SDK types its own settings; the drivers pass the same few to all of them.
type CreateOpenAI = (options: any) => { (id: string): unknown; chat(id: string): unknown };
type CreateCompatible = (options: any) => (id: string) => unknown;

function openaiProvider(create: CreateOpenAI, { baseURL, apiKey, workspace, fetch }: Connection) {
  return create({ baseURL, apiKey, headers: { "Service-Workspace": workspace }, ...(fetch ? { fetch } : {}) });
}

const providerChat = (create: CreateOpenAI): Model => (connection) => openaiProvider(create, connection).chat("ask");
const providerResponses = (create: CreateOpenAI): Model => (connection) => openaiProvider(create, connection)("ask");
const compatibleChat = (create: CreateCompatible): Model => ({ baseURL, apiKey, workspace, fetch }) =>
  create({ name: "workspace", baseURL, apiKey, headers: { "Service-Workspace": workspace }, ...(fetch ? { fetch } : {}) })("ask");
/** @ai-sdk/open-responses takes the Responses endpoint's whole URL. */
const openResponses = (create: CreateCompatible): Model => ({ baseURL, apiKey, workspace, fetch }) =>
  create({ name: "workspace", url: `${baseURL}/responses`, apiKey, headers: { "Service-Workspace": workspace }, ...(fetch ? { fetch } : {}) })("ask");

// ---------------------------------------------------------------------------------------------
// LangChain JS: ChatOpenAI on chat completions, and with useResponsesApi.

type ChatOpenAIClass = new (fields: Record<string, unknown>) => any;

/** LangChain's Responses text blocks carry the annotations (0.x: as sent; 1.x: as `citation` blocks with a `url` and `title`). */
function langchainCitations(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((block: { annotations?: { url?: string; filename?: string; title?: string }[] }) =>
    (block.annotations ?? []).flatMap((annotation) => [annotation.url ?? annotation.filename ?? annotation.title ?? ""]),
  );
}

function langchain(ChatOpenAI: ChatOpenAIClass, api: "chat" | "responses"): (connection: Connection) => Driver {
  return ({ baseURL, apiKey, workspace }) => {
    const model = new ChatOpenAI({
      model: "ask",
      apiKey,
      maxRetries: 0,
      ...(api === "responses" ? { useResponsesApi: true } : {}),
      configuration: { baseURL, defaultHeaders: { "Service-Workspace": workspace } },
    });
    const turn = (message: any): Turn => {
      const text: string = message.text ?? String(message.content);
      return { text, citations: api === "responses" ? langchainCitations(message.content) : textCitations(text), state: message };
    };
    return {
      answer: async (question) => turn(await model.invoke(question)),
      async stream(question) {
        let whole: any = null;
        for await (const chunk of await model.stream(question)) whole = whole === null ? chunk : whole.concat(chunk);
        return turn(whole);
      },
      followUp: async (first, question, next) => turn(await model.invoke([{ role: "user", content: question }, first.state, { role: "user", content: next }])),
      // LangChain raises the OpenAI SDK's error, marked with its own error code.
      isAuthError: (error) => hasStatus(error, 401) && (error as { lc_error_code?: string }).lc_error_code === "MODEL_AUTHENTICATION",
    };
  };
}

// ---------------------------------------------------------------------------------------------
// The OpenAI Agents SDK: an agent whose model is a workspace mode, on the Responses API or chat completions.

/** The parts of an `@openai/agents` module the drivers use. */
interface AgentsModule {
  Agent: new (options: any) => unknown;
  OpenAIResponsesModel: new (client: any, model: string) => unknown;
  OpenAIChatCompletionsModel: new (client: any, model: string) => unknown;
  run(agent: unknown, input: unknown, options?: Record<string, unknown>): Promise<any>;
  setTracingDisabled(disabled: boolean): void;
}

/** The annotations the agent's message items keep in `providerData` (url_citation links, file_citation names). */
function agentCitations(items: { rawItem?: { type?: string; content?: { providerData?: { annotations?: any[] } }[] } }[]): string[] {
  return items.flatMap((item) =>
    item.rawItem?.type === "message"
      ? (item.rawItem.content ?? []).flatMap((part) =>
        (part.providerData?.annotations ?? []).map((annotation: any) => annotation.url ?? annotation.filename ?? annotation.url_citation?.url ?? ""),
      )
      : [],
  );
}

function agentsSdk(agents: AgentsModule, openai: OpenAIModule, api: "chat" | "responses"): (connection: Connection) => Driver {
  // Traces go to api.openai.com by default; tests talk only to loopback.
  agents.setTracingDisabled(true);
  return (connection) => {
    const client = openaiClient(openai, connection);
    const Model = api === "responses" ? agents.OpenAIResponsesModel : agents.OpenAIChatCompletionsModel;
    const agent = new agents.Agent({ name: "workspace", instructions: "Answer from the workspace's documents.", model: new Model(client, "ask") });
    const turn = (result: any): Turn => ({ text: result.finalOutput, citations: agentCitations(result.newItems), state: result });
    return {
      answer: async (question) => turn(await agents.run(agent, question)),
      async stream(question) {
        const result = await agents.run(agent, question, { stream: true });
        let text = "";
        for await (const piece of result.toTextStream()) text += piece;
        await result.completed;
        return { ...turn(result), text };
      },
      // The Agents SDK's history: the first run's items, then the next question.
      followUp: async (first, _question, next) => turn(await agents.run(agent, [...(first.state as { history: unknown[] }).history, { role: "user", content: next }])),
      isAuthError: (error) => error instanceof openai.AuthenticationError && hasStatus(error, 401),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// LlamaIndex: its OpenAI LLM (chat completions) and OpenAIResponses.

function llamaindexDriver(llamaindexOpenAI: { OpenAI: new (options: object) => any; OpenAIResponses: new (options: object) => any }, api: "chat" | "responses"): (connection: Connection) => Driver {
  return ({ baseURL, apiKey, workspace }) => {
    const options = { model: "ask", apiKey, baseURL, maxRetries: 0, additionalSessionOptions: { defaultHeaders: { "Service-Workspace": workspace } } };
    const llm: { chat(params: any): Promise<any> } = api === "responses" ? new llamaindexOpenAI.OpenAIResponses(options) : new llamaindexOpenAI.OpenAI(options);
    // Chat: the raw completion's url_citation annotations. Responses: the message's annotations option.
    const citationsOf = (response: any) =>
      api === "responses" ? responseCitations(response.message.options?.annotations) : urlCitations(response.raw?.choices?.[0]?.message?.annotations);
    const chat = async (messages: { role: "user" | "assistant"; content: string }[]): Promise<Turn> => {
      const response = await llm.chat({ messages });
      return { text: String(response.message.content), citations: citationsOf(response), state: response.message };
    };
    return {
      answer: (question) => chat([{ role: "user", content: question }]),
      async stream(question) {
        let text = "";
        const citations: string[] = [];
        for await (const chunk of await llm.chat({ messages: [{ role: "user", content: question }], stream: true })) {
          const raw = chunk.raw as any;
          // OpenAIResponses repeats the last delta on every later event (its stream state keeps it):
          // its own bug, against OpenAI too, so only text-delta events' chunks are text.
          if (api === "chat" || raw?.type === "response.output_text.delta") text += chunk.delta;
          citations.push(...(api === "responses" ? responseCitations(raw?.annotation ? [raw.annotation] : []) : urlCitations(raw?.choices?.[0]?.delta?.annotations)));
        }
        return { text, citations, state: null };
      },
      followUp: (first, question, next) =>
        chat([{ role: "user", content: question }, { role: "assistant", content: first.text }, { role: "user", content: next }]),
      // LlamaIndex raises the error of the OpenAI SDK it depends on.
      isAuthError: (error) => (error as Error)?.constructor?.name === "AuthenticationError" && hasStatus(error, 401),
    };
  };
}

// ---------------------------------------------------------------------------------------------
// The rows.

const OPENAI = "OpenAI SDK for JavaScript (`openai`)";
const AI_SDK_OPENAI = "Vercel AI SDK: `ai` with `@ai-sdk/openai`";
const AI_SDK_COMPATIBLE = "Vercel AI SDK: `ai` with `@ai-sdk/openai-compatible`";
const AI_SDK_OPEN_RESPONSES = "Vercel AI SDK: `ai` with `@ai-sdk/open-responses`";
const LANGCHAIN = "LangChain JS (`@langchain/openai`)";
const AGENTS = "OpenAI Agents SDK (`@openai/agents`)";
const LLAMAINDEX = "LlamaIndex (`@llamaindex/openai`)";

const CHAT_ANNOTATIONS = "`message.annotations` (`url_citation`)";
const RESPONSES_ANNOTATIONS = "`output_text` annotations (`url_citation`)";

function openaiRows(major: string, openai: Package): MatrixRow[] {
  const row = { client: OPENAI, packages: [openai.installed] };
  return [
    { ...row, id: `openai-${major}-chat`, api: "chat", shows: CHAT_ANNOTATIONS, load: async () => openaiChat(await openai.load()) },
    { ...row, id: `openai-${major}-responses`, api: "responses", shows: RESPONSES_ANNOTATIONS, load: async () => openaiResponses(await openai.load()) },
  ];
}

function aiSdkRows(id: string, provider: Package, ai: Package): MatrixRow[] {
  const row = { client: AI_SDK_OPENAI, packages: [provider.installed, ai.installed] };
  const load = (model: (create: CreateOpenAI) => Model) => async () => aiSdk(await ai.load(), model((await provider.load()).createOpenAI), "sources");
  return [
    { ...row, id: `${id}-chat`, api: "chat", shows: "`sources` (`url`)", load: load(providerChat) },
    { ...row, id: `${id}-responses`, api: "responses", shows: "`sources` (`url`)", load: load(providerResponses) },
  ];
}

function compatibleRow(id: string, provider: Package, ai: Package): MatrixRow {
  return {
    id,
    client: AI_SDK_COMPATIBLE,
    packages: [provider.installed, ai.installed],
    api: "chat",
    shows: "the text only (it reads no annotations)",
    load: async () => aiSdk(await ai.load(), compatibleChat((await provider.load()).createOpenAICompatible), "text"),
  };
}

function openResponsesRow(id: string, provider: Package, ai: Package): MatrixRow {
  return {
    id,
    client: AI_SDK_OPEN_RESPONSES,
    packages: [provider.installed, ai.installed],
    api: "responses",
    shows: "text `providerMetadata.<name>.annotations` (`url_citation` only)",
    load: async () => aiSdk(await ai.load(), openResponses((await provider.load()).createOpenResponses), { metadata: "workspace" }),
  };
}

function langchainRows(major: string, openai: Package, core: Package): MatrixRow[] {
  const row = { client: LANGCHAIN, packages: [openai.installed, core.installed] };
  const load = (api: MatrixRow["api"]) => async () => langchain((await openai.load()).ChatOpenAI, api);
  return [
    { ...row, id: `langchain-${major}-chat`, api: "chat", shows: "the text only (it drops `annotations`)", load: load("chat") },
    { ...row, id: `langchain-${major}-responses`, api: "responses", shows: "text block `annotations`", load: load("responses") },
  ];
}

function agentsRows(id: string, agents: Package, openai: Package): MatrixRow[] {
  const row = { client: AGENTS, packages: [agents.installed], shows: "message `providerData.annotations`" };
  const load = (api: MatrixRow["api"]) => async () => agentsSdk(await agents.load(), await openai.load(), api);
  return [
    { ...row, id: `${id}-chat`, api: "chat", load: load("chat") },
    { ...row, id: `${id}-responses`, api: "responses", load: load("responses") },
  ];
}

function llamaindexRows(llamaindex: Package): MatrixRow[] {
  const row = { client: LLAMAINDEX, packages: [llamaindex.installed] };
  const load = (api: MatrixRow["api"]) => async () => llamaindexDriver(await llamaindex.load(), api);
  return [
    { ...row, id: "llamaindex-chat", api: "chat", shows: "`raw` completion `annotations`", load: load("chat") },
    { ...row, id: "llamaindex-responses", api: "responses", shows: "`message.options.annotations`", load: load("responses") },
  ];
}

const AI5 = project("ai-v5");
const AI6 = project("ai-v6");
const AI7 = project("ai");
const OPENAI_PROVIDER_3 = project("ai-sdk-openai-v3");
const OPENAI_7 = project("openai");

/** Every row of the matrix, in the order of docs/clients.md's table. */
export const MATRIX: readonly MatrixRow[] = [
  ...openaiRows("4", compat("openai-v4")),
  ...openaiRows("5", compat("openai-v5")),
  ...openaiRows("6", project("openai-v6")),
  ...openaiRows("7", OPENAI_7),
  ...aiSdkRows("ai-5-openai-2", project("ai-sdk-openai-v2"), AI5),
  ...aiSdkRows("ai-6-openai-3", OPENAI_PROVIDER_3, AI6),
  // The pair issue 22 was found with: `ai` at its current major, the provider at the one before.
  ...aiSdkRows("ai-7-openai-3", OPENAI_PROVIDER_3, AI7),
  ...aiSdkRows("ai-7-openai-4", project("@ai-sdk/openai"), AI7),
  compatibleRow("ai-5-compatible-1", project("ai-sdk-openai-compatible-v1"), AI5),
  compatibleRow("ai-6-compatible-2", project("ai-sdk-openai-compatible-v2"), AI6),
  compatibleRow("ai-7-compatible-3", project("@ai-sdk/openai-compatible"), AI7),
  openResponsesRow("ai-7-open-responses-2", project("@ai-sdk/open-responses"), AI7),
  ...langchainRows("0", compat("@langchain/openai"), compat("@langchain/core")),
  ...langchainRows("1", project("@langchain/openai"), project("@langchain/core")),
  // Both Agents SDK lines depend on openai ^7: the project's.
  ...agentsRows("agents-0.19", project("openai-agents-v0.19"), OPENAI_7),
  ...agentsRows("agents-0.20", project("@openai/agents"), OPENAI_7),
  ...llamaindexRows(project("@llamaindex/openai")),
];

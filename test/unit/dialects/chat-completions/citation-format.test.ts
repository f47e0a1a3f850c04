import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import type { AnnotationFormat } from "../../../../src/dialects/chat-completions/chat-choice.js";
import { chatCitationFormat, isStrictClient } from "../../../../src/dialects/chat-completions/citation-format.js";

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
const format = (headers: Record<string, string>, annotations: AnnotationFormat = "url_citation") =>
  chatCitationFormat(request(headers), { annotations, style: "annotations" }).annotations;

// Every User-Agent form the Vercel AI SDK has sent, as its packages build it (docs/architecture/dialects.md#citation-formats):
// through `ai` (generateText, streamText), `ai/<version>` replaces the provider's own token.
const AI_SDK = [
  // ai 5.0.277 + @ai-sdk/openai 2.0.131 (provider-utils 3.0.9 to 5.0.50 said `ai-sdk/provider-utils/`, runtime `runtime/node.js/`).
  "ai/5.0.277 ai-sdk/provider-utils/3.0.40 runtime/node.js/v20.20.2",
  // ai 7 + @ai-sdk/openai 3.x: the form the old rule missed (issue 22).
  "ai/7.0.173 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2",
  // On Node 21.1 and later provider-utils takes navigator.userAgent ("Node.js/22"), lower-cased.
  "ai/6.0.326 ai-sdk/provider-utils/4.0.65 runtime/node.js/22",
  // provider-utils 5.0.51 and later: `ai-sdk-provider-utils/`, the runtime without `runtime/`.
  "ai/7.0.173 ai-sdk-provider-utils/5.0.81 node.js/v20.20.2",
  // A provider called without `ai` (model.doGenerate): its own token stays.
  "ai-sdk/openai/2.0.131 ai-sdk/provider-utils/3.0.40 runtime/node.js/v20.20.2",
  "ai-sdk-openai/4.0.118 ai-sdk-provider-utils/5.0.81 node.js/v20.20.2",
  "ai-sdk/openai-compatible/1.0.61 ai-sdk/provider-utils/3.0.44 runtime/node.js/v20.20.2",
  "ai-sdk-openai-compatible/3.0.92 ai-sdk-provider-utils/5.0.81 node.js/v20.20.2",
  // The AI SDK in a browser or an edge runtime, and an application's own token in front.
  "ai/7.0.173 ai-sdk-provider-utils/5.0.81 mozilla/5.0 (x11; linux x86_64)",
  "my-app/1.2 ai/7.0.173 ai-sdk-provider-utils/5.0.81 vercel-edge",
  // A token renamed the way the SDK has renamed them before.
  "ai-sdk-provider-utils-next/6.0.0 node.js/v24.1.0",
];

// Clients that are not the AI SDK, or AI SDK versions before provider-utils 3.0.9, which sent no token of their own.
const OTHERS = ["OpenAI/JS 7.57.0", "OpenAI/Python 1.99.0", "node", "Python/3.12 aiohttp/3.10.5", "langchainjs-openai/1.0.0", "openai-ai/1.0", ""];

describe("strict-client detection", () => {
  it.each(AI_SDK)("recognises the AI SDK by %s", (userAgent) => {
    expect(isStrictClient(request({ "user-agent": userAgent }))).toBe(true);
  });

  it.each(OTHERS)("does not take %j for the AI SDK", (userAgent) => {
    expect(isStrictClient(request({ "user-agent": userAgent }))).toBe(false);
  });
});

describe("the chat annotation format", () => {
  it("is url_citation by default, whoever asks: a client not recognised still gets an answer it accepts", () => {
    for (const userAgent of [...AI_SDK, ...OTHERS]) expect(format({ "user-agent": userAgent })).toBe("url_citation");
  });

  it("is the deployment's file_citation for other clients, but url_citation for a strict one", () => {
    expect(format({ "user-agent": "OpenAI/JS 7.57.0" }, "file_citation")).toBe("file_citation");
    expect(format({ "user-agent": "node" }, "file_citation")).toBe("file_citation");
    for (const userAgent of AI_SDK) expect(format({ "user-agent": userAgent }, "file_citation")).toBe("url_citation");
  });

  it("is the deployment's none for every client", () => {
    for (const userAgent of [...AI_SDK, ...OTHERS]) expect(format({ "user-agent": userAgent }, "none")).toBe("none");
  });

  it("is what the request's header asks, strict client or not", () => {
    expect(format({ "user-agent": AI_SDK[1] as string, "x-chat-annotations": "file_citation" })).toBe("file_citation");
    expect(format({ "user-agent": "OpenAI/JS 7.57.0", "x-chat-annotations": "none" }, "file_citation")).toBe("none");
  });
});

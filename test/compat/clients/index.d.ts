import type * as OpenAIV4 from "openai-v4";
import type * as OpenAIV5 from "openai-v5";
import type * as LangChainOpenAI from "@langchain/openai";

export declare const openaiV4: () => Promise<typeof OpenAIV4>;
export declare const openaiV5: () => Promise<typeof OpenAIV5>;
export declare const langchainOpenAI: () => Promise<typeof LangChainOpenAI>;

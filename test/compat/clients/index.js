// The clients of the matrix whose peers cannot sit beside the project's own (see package.json),
// each loaded when a test asks for it.
export const openaiV4 = () => import("openai-v4");
export const openaiV5 = () => import("openai-v5");
export const langchainOpenAI = () => import("@langchain/openai");

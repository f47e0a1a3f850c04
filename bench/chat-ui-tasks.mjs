// The benchmark's chat-UI housekeeping scenario (docs/chat-ui-tasks.md): how fast the adapter
// answers a chat UI's housekeeping request itself (Open WebUI's title prompt, as Open WebUI sends
// it), against the same request passed on to the workspace (CHAT_UI_TASKS=workspace) and an
// ordinary question, on the instant upstream; and what recognising the frames costs an ordinary
// request, measured in this process on the adapter's own function, beside the adapter's whole CPU
// time per request. Adapters take turns in every round; medians over rounds.
import { loadavg } from "node:os";
import { recognizeChatUiTask } from "../dist/src/chat-ui-tasks/recognize-task.js";
import { chatRounds, LOADED_ADAPTER, nanosPerCall } from "./processes.mjs";

const ROUNDS = Number(process.env.BENCH_TASK_ROUNDS ?? 3);
const SEQUENTIAL = 500;
const LOAD_SECONDS = Number(process.env.BENCH_TASK_SECONDS ?? 4);
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json", "x-openwebui-chat-id": "bench-chat" };
const question = "How much annual leave do employees get?";
const answer = "Employees receive 25 days of paid annual leave per calendar year [1].\n\nSources:\n[1] handbook.md — Leave policy";
// Open WebUI 0.6's title template (test/fixtures/chat-ui-prompts/open-webui/0.6/title.txt), rendered as Open WebUI renders it.
const titlePrompt = `### Task:
Generate a concise, 3-5 word title with an emoji summarizing the chat history.
### Guidelines:
- The title should clearly represent the main theme or subject of the conversation.
- Use emojis that enhance understanding of the topic, but avoid quotation marks or special formatting.
- Write the title in the chat's primary language; default to English if multilingual.
- Prioritize accuracy over excessive creativity; keep it clear and simple.
- Your entire response must consist solely of the JSON object, without any introductory or concluding text.
- The output must be a single, raw JSON object, without any markdown code fences or other encapsulating text.
- Ensure no conversational text, affirmations, or explanations precede or follow the raw JSON output, as this will cause direct parsing failure.
### Output:
JSON format: { "title": "your concise title here" }
### Examples:
- { "title": "📉 Stock Market Trends" },
- { "title": "🍪 Perfect Chocolate Chip Recipe" },
- { "title": "Evolution of Music Streaming" },
- { "title": "Remote Work Productivity Tips" },
- { "title": "Artificial Intelligence in Healthcare" },
- { "title": "🎮 Video Game Development Insights" }
### Chat History:
<chat_history>
USER: ${question}
ASSISTANT: ${answer}
</chat_history>`;
const bodies = {
  title: JSON.stringify({ model: "ask", stream: false, max_tokens: 1000, messages: [{ role: "user", content: titlePrompt }] }),
  question: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }),
};

const round = (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Nanoseconds per call of `recognize` on `messages` (it must decide the same way every time). */
function recognitionNanos(messages, iterations) {
  const decided = new Set();
  const nanos = nanosPerCall(() => decided.add(recognizeChatUiTask(messages) !== null), iterations);
  if (decided.size > 1) throw new Error("recognition changed its mind");
  return nanos;
}

/** What recognising costs: ordinary requests of several shapes, and a housekeeping one, per call. */
function recognitionCost() {
  const plain = (role, text) => ({ role, text });
  const history = Array.from({ length: 40 }, (_, index) => plain(index % 2 ? "assistant" : "user", `${index % 2 ? answer : question} (${index})`));
  const ordinary = {
    shortQuestion: [plain("user", question)],
    systemAndHistory: [plain("system", "You are a helpful assistant that answers from the workspace."), ...history, plain("user", question)],
    longQuestion: [plain("user", `${"Please compare these policies in detail. ".repeat(2500)}${question}`)],
    taskLikeQuestion: [plain("user", `### Task: find the leave policy and summarise it.\n${question}`)],
  };
  const result = { ordinaryNs: {}, housekeepingNs: recognitionNanos([plain("user", titlePrompt)], 20_000) };
  for (const [name, messages] of Object.entries(ordinary)) result.ordinaryNs[name] = recognitionNanos(messages, 200_000);
  return result;
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function chatUiTaskCost(start) {
  const loadBefore = round(loadavg()[0], 2);
  const upstream = await start("instant-upstream.mjs");
  const common = { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER };
  const local = await start("adapter-process.mjs", common);
  const passing = await start("adapter-process.mjs", { ...common, CHAT_UI_TASKS: "workspace" });
  const runs = { titleLocal: [local, bodies.title], titleByWorkspace: [passing, bodies.title], question: [local, bodies.question] };
  const { rows } = await chatRounds(runs, { headers, rounds: ROUNDS, sequential: SEQUENTIAL, seconds: LOAD_SECONDS, label: "chat-ui-tasks" });
  local.child.kill();
  passing.child.kill();
  upstream.child.kill();
  const row = (name) => rows[name];
  const recognition = recognitionCost();
  const questionCpuUs = row("question").cpuUs;
  const worst = Math.max(...Object.values(recognition.ordinaryNs));
  return {
    date: new Date().toISOString(),
    loadAverage: [loadBefore, round(loadavg()[0], 2)],
    rounds: ROUNDS,
    seconds: LOAD_SECONDS,
    titleLocal: row("titleLocal"),
    titleByWorkspace: row("titleByWorkspace"),
    question: row("question"),
    recognition: { ...recognition, worstOrdinaryShareOfRequestCpu: round((worst / 1000 / questionCpuUs) * 100, 3) },
  };
}

// Token counting (`BENCH_ONLY=tokens`): the adapter's counter (src/tokens) on the benchmark's answer,
// on a 200 KB answer (all of it, and the longest the event loop is blocked meanwhile) and on one long
// word, beside the two libraries it could be: tiktoken (the tests' oracle) and gpt-tokenizer's
// countTokens, each in this process after a warm-up. The long word is why the counter is ours
// (src/tokens/token-counter.ts): a byte-pair merge over one piece is quadratic in both libraries.
import { readdirSync, readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { get_encoding } from "tiktoken";
import { countUsage } from "../dist/src/answer/count-usage.js";
import { O200kTokenCounter } from "../dist/src/tokens/token-counter.js";

const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const here = new URL(".", import.meta.url);
/** One word this long is one piece: quadratic to merge for both libraries, so kept to a few seconds there. */
const WORD_LETTERS = 32_000;

/** The instant upstream's answer (bench/instant-upstream.mjs): what a benchmark completion counts. */
const ANSWER =
  "Employees receive 25 days of paid annual leave per calendar year [1]. Unused leave of up to 5 days carries over " +
  "into the first quarter of the next year [1]. Remote work is allowed up to three days per week after the probation " +
  "period, and teams agree on two shared office days [2]. Equipment for the home office is reimbursed up to 500 euros " +
  "once [2]. Security incidents are reported within one hour to the security team through the incident channel [3].\n\n" +
  "Sources:\n[1] handbook.md — Leave policy\n[2] handbook.md — Remote work\n[3] security-policy.md — Incident reporting";

/**
 * The same answer's gist in Cyrillic, Japanese, Arabic, Greek and Devanagari: text the counter's
 * ASCII scanner leaves to the o200k pattern, piece by piece (src/tokens/count-o200k.ts).
 */
const OTHER_SCRIPTS =
  "Сотрудники получают 25 дней оплачиваемого отпуска в календарный год [1]. Неиспользованный отпуск до 5 дней " +
  "переносится на первый квартал следующего года [1].\n従業員は暦年ごとに25日の有給休暇を取得します[1]。在宅勤務は試用期間後、" +
  "週3日まで認められています[2]。\nيحصل الموظفون على 25 يومًا من الإجازة السنوية المدفوعة [1]. يُسمح بالعمل عن بُعد حتى ثلاثة أيام " +
  "في الأسبوع [2].\nΤα περιστατικά ασφαλείας αναφέρονται εντός μίας ώρας στην ομάδα ασφαλείας [3].\n" +
  "सुरक्षा घटनाओं की सूचना एक घंटे के भीतर सुरक्षा टीम को दी जाती है [3]।";

/** The least CPU time, in µs, of one call of `run` over 7 batches of `iterations`. */
function cpuUsPerCall(run, iterations) {
  let best = Infinity;
  for (let batch = 0; batch < 7; batch += 1) {
    const before = process.cpuUsage();
    for (let index = 0; index < iterations; index += 1) run();
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / iterations);
  }
  return round(best, 1);
}

/** Milliseconds `run(measured)` takes, after `run(warm)` (a different text: gpt-tokenizer remembers the pieces it counted). */
function millis(run, warm, measured) {
  run(warm);
  const started = performance.now();
  run(measured);
  return round(performance.now() - started, 1);
}

/** How long the adapter's counter takes over a 200 KB answer, and the longest the event loop is blocked meanwhile. */
async function countingBlock(counter, text) {
  // Warm: a serving adapter's counter is compiled and hot.
  for (let warm = 0; warm < 3; warm += 1) await countUsage([{ prompt: "warm up", content: text, reasoning: "" }], counter);
  // The longest gap between ticks of a 1 ms timer while the count runs: how long the loop was blocked.
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  last = performance.now();
  const started = performance.now();
  const usage = await countUsage([{ prompt: "How much leave?", content: text, reasoning: "" }], counter);
  const elapsed = performance.now() - started;
  clearInterval(ticker);
  return { completionTokens: usage.completionTokens, totalMs: round(elapsed), longestBlockMs: round(longest) };
}

/** The part's figures: the adapter's counter, and each library on the same texts. */
export async function tokenCounting() {
  // About 200 KB of real prose and code: the project's README and docs/ pages, repeated.
  const pages = ["../README.md", ...readdirSync(new URL("../docs/", here)).filter((name) => name.endsWith(".md")).sort().map((name) => `../docs/${name}`)];
  const prose = pages.map((page) => readFileSync(new URL(page, here), "utf8")).join("\n");
  const text = prose.repeat(Math.ceil(200_000 / prose.length)).slice(0, 200_000);
  const word = "b".repeat(WORD_LETTERS);
  // Varied text: the docs in chunks of about 600 characters, each counted once a pass.
  const chunks = Array.from({ length: Math.ceil(prose.length / 600) }, (_, index) => prose.slice(index * 600, index * 600 + 600));
  const counter = new O200kTokenCounter();
  const adapter = await countingBlock(counter, text);
  const tiktoken = get_encoding("o200k_base");
  const plain = { disallowedSpecial: new Set() };
  const { countO200k } = await import("../dist/src/tokens/count-o200k.js");
  const { o200kRanks } = await import("../dist/src/tokens/rank-table.js");
  const table = o200kRanks();
  // The adapter's counter is asynchronous (slices, above); per text, the synchronous count under it.
  const candidates = {
    adapter: (input) => countO200k(table, input),
    tiktoken: (input) => tiktoken.encode_ordinary(input).length,
    gptTokenizer: (input) => countTokens(input, plain),
  };
  const libraries = {};
  for (const [name, count] of Object.entries(candidates)) {
    let chunk = 0;
    libraries[name] = {
      answerUs: cpuUsPerCall(() => count(ANSWER), 2000),
      otherScriptsUs: cpuUsPerCall(() => count(OTHER_SCRIPTS), 1000),
      docsChunkUs: cpuUsPerCall(() => count(chunks[chunk++ % chunks.length]), chunks.length),
      longTextMs: name === "adapter" ? adapter.totalMs : millis(count, text.slice(1), text),
      longWordMs: millis(count, "c".repeat(1000), word),
    };
  }
  tiktoken.free();
  return { bytes: text.length, answerChars: ANSWER.length, otherScriptsChars: OTHER_SCRIPTS.length, docsChunks: chunks.length, longWordChars: word.length, ...adapter, libraries };
}

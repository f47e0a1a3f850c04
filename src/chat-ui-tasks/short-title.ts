/** Most words of a title: the UIs ask for 3 to 5 (Open WebUI, LibreChat), or at most 10 (Lobe Chat). */
const MAX_WORDS = 6;
/** Most characters of a title (Lobe Chat asks for at most 50). */
const MAX_CHARS = 50;
/** Most characters of a title in a script written without spaces (Chinese, Japanese, Thai). */
const MAX_UNSPACED_CHARS = 20;
/** Scripts written without spaces between words: their titles are cut by characters. */
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/**
 * A short title made from the conversation's first question, in its own words and language
 * (docs/chat-ui-tasks.md): the first sentence, without Markdown, quotes, links or closing
 * punctuation, cut at a word boundary to a few words. Nothing is invented: a title says what the
 * user asked. Empty when there is no question.
 */
export function shortTitle(question: string): string {
  const plain = question
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/^\s*(?:#{1,6}|>|[-*+]|\d+[.)])\s+/gm, "")
    .replace(/[*_~#]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const sentence = firstSentence(plain);
  const words = sentence.split(" ").filter(Boolean);
  let title: string;
  if (UNSPACED_SCRIPT.test(sentence)) {
    title = [...sentence].slice(0, MAX_UNSPACED_CHARS).join("");
  } else {
    title = "";
    for (const word of words.slice(0, MAX_WORDS)) {
      const next = title ? `${title} ${word}` : word;
      if ([...next].length > MAX_CHARS) break;
      title = next;
    }
    if (!title && words[0]) title = [...words[0]].slice(0, MAX_CHARS).join("");
  }
  const cleaned = title.replace(/^["'“”‘’«»「」『』\s]+|["'“”‘’«»「」『』\s.,;:!?¿¡。，、；：！？…-]+$/gu, "").trim();
  return capitalise(cleaned);
}

/** The text up to its first sentence end (`.`, `?`, `!` and their CJK forms) that leaves something. */
function firstSentence(text: string): string {
  const end = /[.?!](?=\s|$)|[。？！]/u.exec(text);
  if (!end) return text;
  const sentence = text.slice(0, end.index + end[0].length).trim();
  return sentence.length >= 3 ? sentence : text;
}

function capitalise(text: string): string {
  const [first = "", ...rest] = [...text];
  return first.toLocaleUpperCase() + rest.join("");
}

import { InvalidRequestError } from "../../errors/adapter-error.js";
import type { KnownCall, ToolOutput } from "./read-input.js";

/**
 * What the workspace is asked when a turn hands a tool's result back (docs/responses-api.md#a-tools-result-handed-back):
 * one block per output, naming the function, the arguments it was called with and what it returned,
 * as the next turn of the query that asked for the call. A turn that starts a new query (no thread
 * continues) carries the user's last question first, so the workspace knows what the result is for.
 * An output whose call is nowhere to be found (the input, the previous response, the conversation)
 * is a 400, as on OpenAI: the workspace would be asked about a call nobody made.
 */
export function toolResultsPrompt(
  outputs: readonly ToolOutput[],
  calls: ReadonlyMap<string, KnownCall>,
  question: string | null,
  continued: boolean,
): string {
  const blocks = outputs.map(({ callId, output, index }) => {
    const call = calls.get(callId);
    if (!call) {
      throw new InvalidRequestError(`No function call found for the function_call_output with call_id '${callId}' (input.${index})`, {
        param: "input",
        code: "invalid_value",
      });
    }
    return `The function ${call.name} was called with ${call.arguments || "{}"} and returned:\n${output}`;
  });
  const results = blocks.join("\n\n");
  return !continued && question ? `${question}\n\n${results}` : results;
}

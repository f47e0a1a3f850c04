// A minimal interface-conformant upstream that answers at once: POST /queries returns a finished
// query (a realistic cited answer of about 1 KB), GET /queries one page, GET /workspaces one workspace, GET /health ok. It is the
// floor under every measurement: the benchmark measures what sits between client and upstream.
import { createServer } from "node:http";

const output =
  "Employees receive 25 days of paid annual leave per calendar year [1]. Unused leave of up to 5 days carries over " +
  "into the first quarter of the next year [1]. Remote work is allowed up to three days per week after the probation " +
  "period, and teams agree on two shared office days [2]. Equipment for the home office is reimbursed up to 500 euros " +
  "once [2]. Security incidents are reported within one hour to the security team through the incident channel [3].\n\n" +
  "Sources:\n[1] handbook.md — Leave policy\n[2] handbook.md — Remote work\n[3] security-policy.md — Incident reporting";
// The same answer as JSON, for a question that carries the adapter's instruction block for a structured answer
// (docs/structured-answers.md): what a workspace that follows the block writes, of about the same size.
const jsonOutput = `${JSON.stringify(
  {
    leave: { days: 25, summary: "Employees receive 25 days of paid annual leave per calendar year [1].", carryOver: "Unused leave of up to 5 days carries over into the first quarter of the next year [1]." },
    remoteWork: { daysPerWeek: 3, summary: "Remote work is allowed up to three days per week after the probation period, and teams agree on two shared office days [2].", equipment: "Equipment for the home office is reimbursed up to 500 euros once [2]." },
    incidents: [{ deadline: "one hour", summary: "Security incidents are reported within one hour to the security team through the incident channel [3]." }],
  },
  null,
  2,
)}\n\nSources:\n[1] handbook.md — Leave policy\n[2] handbook.md — Remote work\n[3] security-policy.md — Incident reporting`;
const steps = [{ text: "Looking for the answer in 3 documents." }, { tool: "search_documents" }, { text: "Found 3 relevant passages." }];

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    response.setHeader("content-type", "application/json");
    if (request.method === "POST" && request.url === "/queries") {
      let id = "q";
      let content = "";
      try {
        ({ id = "q", content = "" } = JSON.parse(Buffer.concat(chunks).toString()));
      } catch {
        // not JSON: answer with the default id
      }
      const answer = content.includes("\n<<<structured-answer\n") ? jsonOutput : output;
      response.end(JSON.stringify({ id, content: "question", status: "PROCESSED", output: answer, steps }));
    } else if (request.url?.startsWith("/workspaces")) {
      // The workspaces a key can list (the OAuth consent page checks the one picked).
      response.end(JSON.stringify({ data: [{ id: "bench" }], next_cursor: null, has_more: false }));
    } else if (request.url?.startsWith("/queries")) {
      response.end(JSON.stringify({ data: [], next_cursor: null, has_more: false }));
    } else {
      response.end('{"status":"ok"}');
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));

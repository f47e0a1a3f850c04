#!/usr/bin/env node
// Writes test/fixtures/pdf/travel-policy.pdf: a small, valid three-page PDF (Helvetica text,
// one page per section, a document title in its metadata), built from plain PDF syntax so that it
// is reproducible byte for byte without any tool: `node scripts/make-pdf-fixture.mjs`.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pages = [
  ["Travel policy", "Employees book business travel through the travel desk at least two weeks ahead.", "Economy class is the rule for flights under six hours."],
  ["Expenses on the road", "Meals are reimbursed up to 60 euros per day with receipts.", "Taxis are reimbursed when no public transport runs after 22:00."],
  ["Approvals", "Trips abroad need the approval of the department head before booking.", "Cancelled trips are reported to the travel desk within one working day."],
];

const escape = (text) => text.replace(/[\\()]/g, (char) => `\\${char}`);
const objects = [];
const add = (body) => objects.push(body) && objects.length;
const catalog = add("<< /Type /Catalog /Pages 2 0 R >>");
const pagesId = add("PAGES");
const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
const kids = [];
for (const [title, ...lines] of pages) {
  const text = [`BT /F1 18 Tf 72 740 Td (${escape(title)}) Tj ET`, ...lines.map((line, index) => `BT /F1 11 Tf 72 ${700 - index * 18} Td (${escape(line)}) Tj ET`)].join("\n");
  const content = add(`<< /Length ${Buffer.byteLength(text, "latin1")} >>\nstream\n${text}\nendstream`);
  kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`));
}
objects[pagesId - 1] = `<< /Type /Pages /Kids [${kids.map((id) => `${id} 0 R`).join(" ")}] /Count ${kids.length} >>`;
const info = add("<< /Title (Travel and expenses policy) /Producer (workspace-openai-adapter fixture script) >>");

let pdf = "%PDF-1.4\n";
const offsets = [];
objects.forEach((body, index) => {
  offsets.push(Buffer.byteLength(pdf, "latin1"));
  pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
});
const xref = Buffer.byteLength(pdf, "latin1");
pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("")}`;
pdf += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R /Info ${info} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;

const out = join(dirname(fileURLToPath(import.meta.url)), "../test/fixtures/pdf/travel-policy.pdf");
writeFileSync(out, pdf, "latin1");
console.log(`wrote ${out} (${Buffer.byteLength(pdf, "latin1")} bytes, ${pages.length} pages)`);

/** One document as the adapter's document page shows it. */
export interface DocumentText {
  filename: string;
  text: string;
  /** The text of each page, for documents that have pages (PDFs). */
  pages?: string[];
}

/** Reads a document by the name answers cite it with; null when there is none (the embedded workspace provides one). */
export type DocumentReader = (filename: string) => Promise<DocumentText | null>;

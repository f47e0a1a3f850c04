/**
 * A message of a conversation reduced to what continuity compares: its role and its text. Each
 * dialect turns its own messages (chat messages, Responses input items) into these.
 */
export interface PlainMessage {
  role: string;
  text: string;
}

// An `examples` row and the example it stores: the columns a new row gets from an example, and the example an old
// or new row reads back as. Rows from before migration 0008 have no prompt or completion: they read as prompt ""
// and completion = content (the built-in corpus files were stored that way).
import crypto from 'node:crypto';
import { exampleContent, type ExampleLine, type Message } from '../../core/dataset/example-line';

export interface ExampleColumns {
  contentHash: string;
  content: string;
  prompt: string | null;
  completion: string | null;
  messages: Message[] | null;
  category: string;
  weight: number;
}

/** A row's columns that make its example (prompt, completion and messages are null or absent on older rows). */
export interface StoredExample {
  content: string;
  prompt?: string | null;
  completion?: string | null;
  messages?: Message[] | null;
  category: string;
  weight: number;
}

export function exampleColumns(e: ExampleLine): ExampleColumns {
  const content = exampleContent(e);
  const shape =
    'prompt' in e
      ? { prompt: e.prompt, completion: e.completion, messages: null }
      : { prompt: null, completion: null, messages: e.messages };
  return { contentHash: contentHashOf(content), content, ...shape, category: e.category, weight: e.weight };
}

export function exampleOfRow(row: StoredExample): ExampleLine {
  const { category, weight } = row;
  if (row.messages) return { messages: row.messages, category, weight };
  return { prompt: row.prompt ?? '', completion: row.completion ?? row.content, category, weight };
}

/** The key of an example in its version: sha256 of its content, so the same text twice is one example. */
export function contentHashOf(content: string): string {
  return crypto.createHash('sha256').update(content).digest('hex');
}

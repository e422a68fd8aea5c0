// Reads metrics.jsonl from a byte offset: only complete lines, so a line being written (or cut by a crash)
// is read next time (or reported), and the offset in a heartbeat always points at a line boundary. The file is the
// trainer's (untrusted) output: it is opened confined to the run directory (services/run-files.ts: no link, no FIFO,
// size-capped), and a metric's name must be a short identifier, since names reach an agent proposer's prompt.
import path from 'node:path';
import { openConfined, readRange } from '../../services/run-files';

export interface MetricPoint {
  name: string;
  step: number;
  value: number;
  offset: number;
}

export interface MetricsChunk {
  points: MetricPoint[];
  /** Offset just past the last complete line read. */
  nextOffset: number;
  /** Complete lines that were not a JSON object with an integer `step`. */
  malformed: number;
  /** Metric values dropped because their name is not a short identifier (METRIC_NAME). */
  refusedNames: number;
  /** Bytes after the last newline (a line still being written, or cut short). */
  partialBytes: number;
}

/** The most read at once: a chunk's memory. */
const MAX_READ = 4 * 1024 * 1024;
/** The largest metrics.jsonl read at all (a million lines of a few metrics); a larger one breaks the contract. */
export const METRICS_MAX_BYTES = 1024 * 1024 * 1024;
/**
 * A metric's name: a letter, then up to 63 letters, digits and `_ . / -` (`loss`, `eval/loss`, `lr_0`). Anything
 * else is dropped: the names are shown to an LLM proposer, and a trainer must not write text into its prompt.
 */
export const METRIC_NAME = /^[A-Za-z][A-Za-z0-9_./-]{0,63}$/;

const EMPTY = { points: [], malformed: 0, refusedNames: 0, partialBytes: 0 };

/** New complete lines of the run's metrics file after `offset`; a missing file is no lines yet. */
export function readMetrics(file: string, offset: number): MetricsChunk {
  const f = openConfined(path.dirname(file), path.basename(file), { maxBytes: METRICS_MAX_BYTES, what: 'metrics' });
  if (f === undefined) return { ...EMPTY, nextOffset: offset };
  try {
    const len = Math.min(f.size - offset, MAX_READ);
    if (len <= 0) return { ...EMPTY, nextOffset: offset };
    const buf = readRange(f, offset, len);
    const lastNl = buf.lastIndexOf(0x0a);
    const complete = lastNl < 0 ? 0 : lastNl + 1;
    const points: MetricPoint[] = [];
    let malformed = 0;
    let refusedNames = 0;
    let lineStart = 0;
    while (lineStart < complete) {
      const nl = buf.indexOf(0x0a, lineStart);
      const line = buf.subarray(lineStart, nl).toString('utf8').trim();
      const at = offset + lineStart;
      lineStart = nl + 1;
      if (!line) continue;
      const parsed = parseLine(line);
      if (!parsed) {
        malformed++;
        continue;
      }
      for (const [name, value] of Object.entries(parsed.values)) {
        if (METRIC_NAME.test(name)) points.push({ name, step: parsed.step, value, offset: at });
        else refusedNames++;
      }
    }
    return { points, nextOffset: offset + complete, malformed, refusedNames, partialBytes: buf.length - complete };
  } finally {
    f.close();
  }
}

function parseLine(line: string): { step: number; values: Record<string, number> } | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const rec = obj as Record<string, unknown>;
  if (typeof rec.step !== 'number' || !Number.isInteger(rec.step) || rec.step < 0) return undefined;
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(rec)) if (k !== 'step' && typeof v === 'number' && Number.isFinite(v)) values[k] = v;
  return { step: rec.step, values };
}

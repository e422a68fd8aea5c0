// Reads metrics.jsonl from a byte offset: only complete lines, so a line being written (or cut by a crash)
// is read next time (or reported), and the offset in a heartbeat always points at a line boundary.
import fs from 'node:fs';

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
  /** Bytes after the last newline (a line still being written, or cut short). */
  partialBytes: number;
}

const MAX_READ = 4 * 1024 * 1024;

export function readMetrics(file: string, offset: number): MetricsChunk {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { points: [], nextOffset: offset, malformed: 0, partialBytes: 0 };
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size - offset, MAX_READ);
    if (len <= 0) return { points: [], nextOffset: offset, malformed: 0, partialBytes: 0 };
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, offset);
    const lastNl = buf.lastIndexOf(0x0a);
    const complete = lastNl < 0 ? 0 : lastNl + 1;
    const points: MetricPoint[] = [];
    let malformed = 0;
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
      for (const [name, value] of Object.entries(parsed.values)) points.push({ name, step: parsed.step, value, offset: at });
    }
    return { points, nextOffset: offset + complete, malformed, partialBytes: len - complete };
  } finally {
    fs.closeSync(fd);
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

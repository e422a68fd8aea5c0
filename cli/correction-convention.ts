// The warning `flywheel feedback import` prints when corrections do not follow the completion convention of the data
// their campaign trains on (a trailing newline, core/dataset/feedback-shape.ts): they are stored as sent, and the
// outer loop adds the terminator when it trains on them; the warning says so, once per campaign, naming the lines.
import type { FeedbackShape } from '../core/dataset/feedback-shape';
import type { FeedbackEvent } from '../core/feedback';

/** Lines named in a warning before "and N more". */
const SHOWN_LINES = 10;

export function correctionWarnings(
  file: string,
  lines: ReadonlyArray<{ line: number; event: FeedbackEvent }>,
  shapes: ReadonlyMap<string, FeedbackShape | undefined>,
): string[] {
  const out: string[] = [];
  for (const [campaignId, shape] of shapes) {
    const terminator = shape?.terminator;
    if (!terminator) continue;
    const off = lines
      .filter((l) => l.event.campaignId === campaignId && l.event.correction && !l.event.correction.endsWith(terminator))
      .map((l) => l.line);
    if (off.length === 0) continue;
    const shown = off.slice(0, SHOWN_LINES).join(', ') + (off.length > SHOWN_LINES ? ` and ${off.length - SHOWN_LINES} more` : '');
    out.push(
      `${file}: warning: ${off.length} correction${off.length > 1 ? 's' : ''} for ${campaignId} (line${off.length > 1 ? 's' : ''} ${shown}) lack${off.length > 1 ? '' : 's'} the ${JSON.stringify(terminator)} its dataset's completions end with; stored as sent, the outer loop adds it when it trains on them`,
    );
  }
  return out;
}

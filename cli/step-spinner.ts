// A one-line spinner naming the current step of a long command, on stderr so stdout stays the command's output.
// On a terminal it redraws in place; elsewhere (CI logs, pipes) it stays silent and only `done` prints.

export interface StepSpinner {
  step(text: string): void;
  /** Clears the spinner and prints `text` (if any) on its own line. */
  done(text?: string): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function stepSpinner(label: string, out: NodeJS.WriteStream = process.stderr): StepSpinner {
  const tty = out.isTTY === true;
  let current = '';
  let frame = 0;
  const draw = () => out.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label}: ${current}`);
  const timer = tty ? setInterval(draw, 80) : undefined;
  timer?.unref();
  return {
    step(text) {
      current = text;
      if (tty) draw();
    },
    done(text) {
      if (timer) clearInterval(timer);
      if (tty) out.write('\r\x1b[2K');
      if (text) out.write(`${text}\n`);
    },
  };
}

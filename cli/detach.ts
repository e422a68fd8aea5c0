// Ctrl-C on a command that follows a loop detaches instead of killing the process. Installed before the
// workflow starts, so a Ctrl-C in the moment between "started" and the first redraw still detaches cleanly.
export interface Detach {
  requested: Promise<void>;
  dispose(): void;
}

export function detachOnSigint(): Detach {
  let resolve!: () => void;
  const requested = new Promise<void>((r) => (resolve = r));
  const onSigint = () => resolve();
  process.on('SIGINT', onSigint);
  return { requested, dispose: () => process.removeListener('SIGINT', onSigint) };
}

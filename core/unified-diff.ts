// Reading a unified diff (git's `diff --git` form, or plain `---`/`+++` headers) into the files it touches: their old
// and new paths, whether it creates, deletes, renames, changes a mode or carries binary data, and its added and
// removed lines. Pure: the recipe checks (activities/recipes/check-patch.ts) decide what is allowed.

export interface DiffFile {
  /** The path before the change, without git's `a/` prefix; null for a created file. */
  oldPath: string | null;
  /** The path after the change, without git's `b/` prefix; null for a deleted file. */
  newPath: string | null;
  newFile: boolean;
  deleted: boolean;
  rename: boolean;
  /** `new mode`, or the mode of a created file (`100644`, `100755`, `120000`). */
  newMode?: string;
  /** A mode change of an existing file (`old mode`/`new mode`). */
  modeChange: boolean;
  binary: boolean;
  /** The hunks' `+` lines, without the `+`. */
  added: string[];
  /** The hunks' `-` lines, without the `-`. */
  removed: string[];
  /** Each hunk's lines as written (`+`, `-`, ` ` and `\` lines), headers dropped: what normalising keeps. */
  body: string[];
}

const stripPrefix = (p: string): string | null => {
  const path = p.trim().replace(/\t.*$/, '');
  if (path === '/dev/null') return null;
  return path.startsWith('a/') || path.startsWith('b/') ? path.slice(2) : path;
};

const fresh = (): DiffFile => ({
  oldPath: null,
  newPath: null,
  newFile: false,
  deleted: false,
  rename: false,
  modeChange: false,
  binary: false,
  added: [],
  removed: [],
  body: [],
});

/** Files whose `---` header was read: a second `---` starts the next file of a diff without `diff --git` lines. */
const sawMinus = new WeakSet<DiffFile>();

/** The files of a unified diff, in order; an empty list for text that holds no file change. */
export function parseUnifiedDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  let cur: DiffFile | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  const start = (): DiffFile => {
    cur = fresh();
    files.push(cur);
    return cur;
  };
  for (const line of diff.replace(/\r\n/g, '\n').split('\n')) {
    if (cur && (oldLeft > 0 || newLeft > 0)) {
      // Inside a hunk: its header's counts say where it ends, so a removed `--- x` line is not a file header.
      const c = line[0];
      if (c === '\\') {
        cur.body.push(line);
        continue;
      }
      if (c === '+' || c === '-' || c === ' ' || line === '') {
        const text = line.slice(1);
        if (c === '+') {
          cur.added.push(text);
          newLeft--;
        } else if (c === '-') {
          cur.removed.push(text);
          oldLeft--;
        } else {
          oldLeft--;
          newLeft--;
        }
        cur.body.push(line === '' ? ' ' : line);
        continue;
      }
      oldLeft = newLeft = 0;
    }
    const git = /^diff --git (\S+) (\S+)$/.exec(line);
    if (git) {
      const f = start();
      f.oldPath = stripPrefix(git[1]);
      f.newPath = stripPrefix(git[2]);
      continue;
    }
    if (line.startsWith('--- ')) {
      const f = cur && cur.body.length === 0 && !sawMinus.has(cur) ? cur : start();
      sawMinus.add(f);
      f.oldPath = stripPrefix(line.slice(4));
      if (f.oldPath === null) f.newFile = true;
      continue;
    }
    if (line.startsWith('+++ ') && cur) {
      cur.newPath = stripPrefix(line.slice(4));
      if (cur.newPath === null) cur.deleted = true;
      continue;
    }
    if (!cur) continue;
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      cur.body.push('@@');
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^new file mode (\d+)/.exec(line))) {
      cur.newFile = true;
      cur.oldPath = null;
      cur.newMode = m[1];
    } else if (/^deleted file mode /.test(line)) {
      cur.deleted = true;
      cur.newPath = null;
    } else if (/^old mode /.test(line)) cur.modeChange = true;
    else if ((m = /^new mode (\d+)/.exec(line))) {
      cur.modeChange = true;
      cur.newMode = m[1];
    } else if ((m = /^(?:rename|copy) from (.+)$/.exec(line))) {
      cur.rename = true;
      cur.oldPath = m[1];
    } else if ((m = /^(?:rename|copy) to (.+)$/.exec(line))) {
      cur.rename = true;
      cur.newPath = m[1];
    } else if (/^Binary files |^GIT binary patch/.test(line)) cur.binary = true;
  }
  return files;
}

/** The paths a diff reads or writes (old and new), each once. */
export function touchedPaths(files: DiffFile[]): string[] {
  return [...new Set(files.flatMap((f) => [f.oldPath, f.newPath].filter((p): p is string => p !== null)))];
}

/** `train.py +5 -1, model.py +2 -0`: each file's added and removed line counts. */
export function diffSummary(files: DiffFile[]): string {
  return files.map((f) => `${f.newPath ?? f.oldPath ?? '?'} +${f.added.length} -${f.removed.length}`).join(', ');
}

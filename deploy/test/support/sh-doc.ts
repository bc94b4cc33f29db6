// The fenced `sh` blocks of a Markdown document read the way bash would read them, enough to
// check the names a recipe uses: words after quote removal, `$VAR` / `${VAR}` expanded from
// what the blocks exported so far, prefix assignments (`VAR=value command`), and heredoc
// bodies. Not a shell: `$(...)` and `${VAR%...}`-style expansions stay as written (an
// exported `$(...)` takes its value from `samples`), and no command is run.

export interface Command {
  /** Words after quote removal and expansion; the prefix assignments are not among them. */
  readonly words: string[];
  /** `VAR=value` before the command word: visible to this command only. */
  readonly assigns: ReadonlyMap<string, string>;
  /** Names exported before this command (what a program it runs sees, with `assigns`). */
  readonly exported: ReadonlySet<string>;
  /** Body of a `<<'EOF'` heredoc started on this command's line. */
  readonly heredoc?: string;
  /** The command as written (continuation lines joined), for messages. */
  readonly source: string;
}

const FENCE = /^```sh\n([\s\S]*?)^```$/gm;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;

/** The body of every ```sh block, in order. */
export const shBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(FENCE)].map((m) => m[1] ?? '');

/** `$NAME` or `${NAME}` at `i` (a `$` in `s`): [value, length], the text itself when unknown. */
function variable(s: string, i: number, env: ReadonlyMap<string, string>): [string, number] {
  const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(s.slice(i));
  const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(s.slice(i));
  const m = braced ?? plain;
  if (m === null) return ['$', 1];
  return [env.get(m[1] ?? '') ?? m[0], m[0].length];
}

/** Index just past the `)` closing the `$(` at `i`, quotes inside respected. */
function closeParen(s: string, i: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = i; j < s.length; j++) {
    const c = s[j];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') j++;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
  }
  return s.length;
}

/** Splits one logical line into commands of words (`;`, `|`, `&&` separate commands). */
function lex(line: string, env: ReadonlyMap<string, string>): string[][] {
  const commands: string[][] = [[]];
  let word: string | undefined;
  const push = (): void => {
    if (word !== undefined) commands[commands.length - 1]?.push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (/\s/.test(c)) push();
    else if (c === '#' && word === undefined) break;
    else if (c === ';' || c === '|' || c === '&') {
      push();
      if ((commands[commands.length - 1]?.length ?? 0) > 0) commands.push([]);
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && '$`"\\'.includes(line[i + 1] ?? '')) word += line[++i];
        else if (line[i] === '$' && line[i + 1] === '(') {
          const end = closeParen(line, i + 1);
          word += line.slice(i, end);
          i = end - 1;
        } else if (line[i] === '$') {
          const [value, n] = variable(line, i, env);
          word += value;
          i += n - 1;
        } else word += line[i];
      }
    } else if (c === '\\') word = (word ?? '') + (line[++i] ?? '');
    else if (c === '$' && line[i + 1] === '(') {
      const end = closeParen(line, i + 1);
      word = (word ?? '') + line.slice(i, end);
      i = end - 1;
    } else if (c === '$') {
      const [value, n] = variable(line, i, env);
      word = (word ?? '') + value;
      i += n - 1;
    } else word = (word ?? '') + c;
  }
  push();
  return commands.filter((c) => c.length > 0);
}

/**
 * Every command of the document's sh blocks, in order. `samples`: values for variables the
 * recipe sets from a command's output (`export X=$(aws ...)`), so later words can be expanded.
 */
export function shCommands(markdown: string, samples: Readonly<Record<string, string>>): Command[] {
  const env = new Map<string, string>();
  const exported = new Set<string>();
  const out: Command[] = [];
  for (const block of shBlocks(markdown)) {
    const lines = block.replace(/\\\n/g, ' ').split('\n');
    for (let n = 0; n < lines.length; n++) {
      const source = lines[n] ?? '';
      const here = /<<\s*'?(\w+)'?/.exec(source);
      let heredoc: string | undefined;
      if (here !== null) {
        const end = lines.findIndex((l, k) => k > n && l === here[1]);
        heredoc = `${lines.slice(n + 1, end).join('\n')}\n`;
        n = end;
      }
      for (const all of lex(source, env)) {
        const isExport = all[0] === 'export';
        const assigns = new Map<string, string>();
        let k = isExport ? 1 : 0;
        for (let m = ASSIGN.exec(all[k] ?? ''); m !== null; m = ASSIGN.exec(all[++k] ?? '')) {
          const name = m[1] ?? '';
          const value = (m[2] ?? '').includes('$(') ? (samples[name] ?? m[2] ?? '') : (m[2] ?? '');
          assigns.set(name, value);
        }
        const words = all.slice(k);
        if (isExport || words.length === 0) {
          // `export X=v` or a bare `X=v`: the shell keeps it (only the former for programs).
          for (const [name, value] of assigns) {
            env.set(name, value);
            if (isExport) exported.add(name);
          }
          for (const name of words) if (isExport && NAME.test(name)) exported.add(name);
        }
        out.push({
          words,
          assigns,
          exported: new Set(exported),
          ...(heredoc === undefined ? {} : { heredoc }),
          source,
        });
      }
    }
  }
  return out;
}

/** The value after `flag` in `words` (`--flag value` or `--flag=value`), each occurrence. */
export function flagValues(words: readonly string[], ...flags: string[]): string[] {
  const values: string[] = [];
  words.forEach((w, i) => {
    for (const flag of flags) {
      if (w === flag && i + 1 < words.length) values.push(words[i + 1] ?? '');
      else if (w.startsWith(`${flag}=`)) values.push(w.slice(flag.length + 1));
    }
  });
  return values;
}

/** `words` starts with these words (`startsWith(c.words, 'aws', 'iam', 'create-role')`). */
export const startsWith = (words: readonly string[], ...prefix: string[]): boolean =>
  prefix.every((p, i) => words[i] === p);

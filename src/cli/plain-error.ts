/** An error as the CLI prints it: Node's own errors (a missing file, a bad flag) in words, ours with their code. */
export function plainError(e: Error & { code?: string; path?: string }, command: string): string {
  if (e.code === 'ENOENT' && e.path) return `${e.path}: no such file`;
  if (e.code === 'EACCES' && e.path) return `${e.path}: permission denied`;
  if (e.code === 'EISDIR') return `${e.path ?? 'a path given'} is a folder, not a file`;
  if (
    e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
    e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
    e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
  ) {
    return (
      `${e.message.replace(/\. To specify a positional argument.*$/s, '')} ` +
      `(specula ${command} --help lists the options)`
    );
  }
  return `${e.code ? `[${e.code}] ` : ''}${e.message}`;
}

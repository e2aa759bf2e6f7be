/**
 * Where the root fields' spans go: nowhere until the server turns Sentry on (src/server/sentry.ts sets the
 * runner), so the schema never loads @sentry/node itself: importing it costs half a second of every start.
 */
export type SpanRunner = <T>(name: string, run: () => T) => T;

let runner: SpanRunner = (_name, run) => run();

export function setSpanRunner(next: SpanRunner): void {
  runner = next;
}

export function inSpan<T>(name: string, run: () => T): T {
  return runner(name, run);
}

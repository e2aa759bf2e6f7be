/** The one function of edit-distance (Zhang-Shasha tree edit distance) that teds.ts calls. */
declare module 'edit-distance' {
  const editDistance: {
    ted<T>(
      a: T,
      b: T,
      children: (n: T) => T[],
      insert: (n: T) => number,
      remove: (n: T) => number,
      update: (x: T, y: T) => number,
    ): { distance: number };
  };
  export default editDistance;
}

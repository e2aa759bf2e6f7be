/**
 * Types only, erased from the compiled scripts (the page loads no modules of its own but playground.js and api.js):
 * the API's answers as the playground reads them, and the part of marked it calls.
 */

/** Drafter and verifier names are the API's enum values (CTC, DUAL_DIFFUSION), listed by the engine query. */
export interface Strategies {
  drafters: { name: string; description: string; available: boolean; reason: string | null }[];
  verifiers: { name: string; description: string }[];
  defaultDrafter: string;
  defaultVerifier: string;
}

export interface TokenDelta {
  __typename: 'TokenDelta';
  seq: number;
  page: number;
  line: number;
  text: string;
  fromDraft: boolean[];
  accepted: number;
  drafted: number;
}

export type JobEvent =
  | TokenDelta
  | { __typename: 'JobDone'; seq: number; metrics: FinalMetrics }
  | { __typename: 'JobFailed'; seq: number; code: string; message: string }
  | { __typename: 'JobCancelled' | 'PageDone' | 'RegionDone'; seq: number }
  | { __typename: 'JobRestarted'; seq: number; attempt: number };

export interface FinalMetrics {
  tokensPerForward: number;
  forwards: number;
  sequenceForwards: number;
  acceptanceByPosition: number[];
  committedTokens: number;
  acceptedTokens: number;
  visualTokenRatio: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface JobResult {
  status: string;
  markdown: string | null;
  error: { code: string; message: string } | null;
  pages: {
    index: number;
    width: number;
    height: number;
    rotation: number;
    blocks: { type: string; order: number; box: Box }[];
  }[];
}

export interface GqlError {
  message: string;
  extensions?: { code?: string };
}

/** marked, loaded from /playground/vendor/marked.js when the first result is shown. */
export interface Marked {
  parse(md: string): string;
  use(ext: unknown): void;
}

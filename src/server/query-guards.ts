/**
 * The cheap hostile-query guards that run before execution: a nesting check ahead of graphql-js's parser,
 * graphql-armor's token, depth and alias limits (with stable codes), and the introspection switch, which also
 * switches off "Did you mean" suggestions (they would name the fields, arguments, types and enum values it hides).
 */
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { type ExecutionResult, GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ServerConfig } from './config.js';

/**
 * Selection sets nested deeper than this are refused before graphql-js parses them: its parser recurses once per
 * level, and a few thousand levels (well under the token limit) overflow the stack, an INTERNAL error instead of
 * a refusal. The standard introspection query nests 15 deep; the depth limit proper runs at validation.
 */
const MAX_NESTING = 64;

function nesting(source: string): number {
  let depth = 0;
  let most = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '"') {
      // Skip strings (and block strings): braces in them are not selections.
      const block = source.startsWith('"""', i);
      const end = block ? source.indexOf('"""', i + 3) : source.indexOf('"', i + 1);
      i = end < 0 ? source.length : end + (block ? 2 : 0);
    } else if (c === '#') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
    } else if (c === '{') {
      most = Math.max(most, ++depth);
    } else if (c === '}') {
      depth--;
    }
  }
  return most;
}

const nestingGuard: Plugin = {
  onParse({ params }) {
    const source = typeof params.source === 'string' ? params.source : params.source.body;
    const n = nesting(source);
    if (n > MAX_NESTING) {
      throw new GraphQLError(`the query nests ${n} levels deep; at most ${MAX_NESTING}`, {
        extensions: { code: 'QUERY_TOO_DEEP', http: { status: 400 } },
      });
    }
  },
};

/** Introspection refused at validation, where SPECULA_INTROSPECTION=0. */
const noIntrospection: Plugin = {
  onValidate({ addValidationRule }) {
    addValidationRule(NoSchemaIntrospectionCustomRule);
  },
};

/**
 * Every form graphql-js suggests in ("Did you mean the enum value ...", "... to use an inline fragment on"), at
 * validation and in the variable errors made at execution; graphql-armor's blocker sees only the first form.
 */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

function withoutSuggestions(errors: readonly Error[] | undefined): void {
  for (const error of errors ?? []) error.message = error.message.replace(SUGGESTION, '');
}

const resultErrors = (result: unknown): readonly GraphQLError[] | undefined =>
  (result as ExecutionResult | null)?.errors;

const noSuggestions: Plugin = {
  onValidate() {
    return ({ result }) => withoutSuggestions(result);
  },
  onExecute: () => ({ onExecuteDone: ({ result }) => withoutSuggestions(resultErrors(result)) }),
  onSubscribe: () => ({ onSubscribeResult: ({ result }) => withoutSuggestions(resultErrors(result)) }),
};

/** graphql-armor's guards report plain errors; give them a stable code instead. */
function coded(code: string): {
  propagateOnRejection: false;
  onReject: ((ctx: ValidationContext | null, error: GraphQLError) => void)[];
} {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx, error) =>
        ctx?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, ''), { extensions: { code } })),
    ],
  };
}

/**
 * The guards in the order they go in yoga's plugin list: nesting, tokens, depth, aliases, then introspection and
 * suggestions.
 */
export function queryGuards(config: ServerConfig): Plugin[] {
  return [
    nestingGuard,
    maxTokensPlugin({ n: 5000 }),
    // Introspection is deep by nature (getIntrospectionQuery nests 15 levels) and bounded by the schema itself.
    maxDepthPlugin({
      n: config.limits.depth,
      ignoreIntrospection: true,
      flattenFragments: true,
      ...coded('QUERY_TOO_DEEP'),
    }),
    maxAliasesPlugin({ n: 20, ...coded('QUERY_TOO_COMPLEX') }),
    ...(config.introspection ? [] : [noIntrospection, noSuggestions]),
  ];
}

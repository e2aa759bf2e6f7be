/** The schema builder and its plugins; no types here (each domain type has its own file). */
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import TracingPlugin, { isRootField } from '@pothos/plugin-tracing';
import ZodPlugin from '@pothos/plugin-zod';
import { GraphQLError } from 'graphql';
import type { RequestContext, TenantContext } from '../src/resolvers/context.js';
import { inSpan } from './spans.js';

export const builder = new SchemaBuilder<{
  Context: RequestContext;
  AuthScopes: { tenant: boolean };
  AuthContexts: { tenant: TenantContext };
  Scalars: {
    File: { Input: File; Output: never };
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: Date; Output: string };
  };
  DefaultFieldNullability: false;
}>({
  // Auth first: nothing else runs for a request that may not see the field.
  plugins: [ScopeAuthPlugin, ErrorsPlugin, ZodPlugin, RelayPlugin, DataloaderPlugin, ComplexityPlugin, TracingPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    // Subscriptions are authorised before their stream opens, not only per event.
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({ tenant: ctx.tenant !== null }),
    unauthorizedError: (_parent, ctx) =>
      new GraphQLError(
        ctx.authFailure === 'unknown'
          ? 'the API key is not valid'
          : ctx.authFailure === 'malformed'
            ? 'send the API key as "Authorization: Bearer <key>"'
            : 'an API key is required: send "Authorization: Bearer <key>"',
        { extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } } },
      ),
  },
  errors: { defaultTypes: [] },
  zod: {
    // A decoding value out of its range is INVALID_DECODING, as a choice the served model cannot run is.
    validationError: (error) =>
      new GraphQLError(error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), {
        extensions: {
          code: error.issues.every((i) => i.path.includes('decoding')) ? 'INVALID_DECODING' : 'BAD_USER_INPUT',
          issues: error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
        },
      }),
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    pageInfoTypeOptions: { description: 'Where a page of a list lies in the whole list, and its cursors.' },
    beforeArgOptions: { description: 'A cursor: return the items before this edge.' },
    afterArgOptions: { description: 'A cursor: return the items after this edge.' },
    firstArgOptions: { description: 'How many items to return, counting on from the start (or from `after`).' },
    lastArgOptions: { description: 'How many items to return, counting back from the end (or from `before`).' },
    pageInfoFieldOptions: { description: 'Where this page lies in the list.' },
    cursorFieldOptions: { description: 'Pass as `after` or `before` to page on from this edge.' },
    hasNextPageFieldOptions: { description: "True when more items follow this page's last edge." },
    hasPreviousPageFieldOptions: { description: "True when more items precede this page's first edge." },
    startCursorFieldOptions: { description: "Cursor of the page's first edge; null when the page is empty." },
    endCursorFieldOptions: { description: "Cursor of the page's last edge; null when the page is empty." },
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 10,
    limit: (ctx) => ({ complexity: ctx.limits.complexity, depth: ctx.limits.depth, breadth: 200 }),
    complexityError: (kind, result) =>
      new GraphQLError(
        `the query is too ` +
          `${kind === 'Depth' ? 'deep' : kind === 'Breadth' ? 'broad' : 'costly'}: ` +
          `${kind.toLowerCase()} ${result[kind.toLowerCase() as 'depth']} over ` +
          `the limit of ${result[`max${kind}` as 'maxDepth']}`,
        {
          extensions: {
            code: kind === 'Depth' ? 'QUERY_TOO_DEEP' : 'QUERY_TOO_COMPLEX',
            kind: kind.toLowerCase(),
            ...result,
          },
        },
      ),
  },
  tracing: {
    // Root query and mutation fields only: a span per lookup or mutation, not per scalar or per streamed event.
    // Spans only; errors are reported once, by the server's error masking, and only the unexpected ones.
    default: (config) => isRootField(config) && config.parentType !== 'Subscription',
    wrap: (resolver, _options, config) => (parent, args, ctx, info) =>
      inSpan(`${config.parentType}.${config.name}`, () => resolver(parent, args, ctx, info)),
  },
});

builder.queryType({ description: 'What a client can read: its jobs and the engine.' });
builder.mutationType({ description: 'What a client can change: submit a document, cancel a job.' });
builder.subscriptionType({ description: "What a client can follow live: a job's events." });

/** The builder's resolved types, for helpers that build fields outside a `fields` callback. */
export type SchemaTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

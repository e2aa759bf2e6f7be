/** Scalars: File (a multipart upload, per the GraphQL multipart request spec), JSON, DateTime. */
import { GraphQLError } from 'graphql';
import { builder } from './builder.js';

builder.scalarType('File', {
  description: 'A file sent as a multipart upload (GraphQL multipart request spec).',
  serialize: () => {
    throw new GraphQLError('File is an input-only scalar');
  },
  parseValue: (v) => {
    // Yoga's multipart parser gives its own File class (a WHATWG File, but not Node's global one).
    const f = v as { arrayBuffer?: unknown; size?: unknown } | null;
    if (f && typeof f === 'object' && typeof f.arrayBuffer === 'function' && typeof f.size === 'number')
      return v as File;
    throw new GraphQLError(
      'a File must be sent as a multipart upload (GraphQL multipart request spec), not as a value',
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
  },
  parseLiteral: () => {
    throw new GraphQLError('a File cannot be written in the query; send it as a multipart upload', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
});

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (v) => v,
  parseValue: (v) => v,
});

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time, UTC.',
  serialize: (v) => String(v), // stored as ISO strings already
  parseValue: (v) => {
    const d = new Date(String(v));
    if (Number.isNaN(d.getTime())) throw new GraphQLError(`"${String(v)}" is not an ISO 8601 date-time`);
    return d;
  },
});

/** Typed errors a field can answer with (a union member the client can branch on). */
import { NotFoundError } from '../src/resolvers/errors.js';
import { builder } from './builder.js';

export const ErrorInterface = builder.interfaceRef<Error & { code?: string }>('Error').implement({
  description: 'Something the client can act on; `code` is stable.',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.string({ resolve: (e) => e.code ?? 'ERROR' }),
  }),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: 'No such job for this tenant (another tenant\'s job does not exist here either).',
  interfaces: [ErrorInterface],
  isTypeOf: (o) => o instanceof NotFoundError,
  fields: (t) => ({ id: t.exposeID('id') }),
});

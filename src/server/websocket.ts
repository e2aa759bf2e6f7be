/**
 * graphql-ws on /graphql for WebSocket clients: the key is checked when the connection opens, and every operation
 * goes through yoga's envelop, so the same guards, context and error masking apply as over HTTP.
 */
import type { IncomingMessage, Server } from 'node:http';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocket, WebSocketServer } from 'ws';
import type { RequestContext } from '../resolvers/context.js';
import type { ApiKeys, AuthResult } from './auth.js';
import { clientError } from './masked-errors.js';

/** RFC 6455's "Message Too Big", which ws closes with, without a reason, when a message is over maxPayload. */
const MESSAGE_TOO_BIG = 1009;

/**
 * The WebSocket server graphql-ws runs on. A message over maxPayload closes the socket with 1009 and a reason that
 * says so (graphql-ws clients report a close's code and reason, and do not retry a 1009).
 */
export function webSocketServer(server: Server, path: string, maxPayload: number): WebSocketServer {
  const reason = `Payload too large: a message may hold at most ${maxPayload} bytes`;
  class Socket extends WebSocket {
    override close(code?: number, data?: string | Buffer): void {
      super.close(code, code === MESSAGE_TOO_BIG && !data ? reason : data);
    }

    // ws then emits the refusal as an error, which graphql-ws prints with its stack: a client's doing, not ours.
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      const refused =
        event === 'error' && (args[0] as { code?: unknown })?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';
      return refused || super.emit(event, ...args);
    }
  }
  return new WebSocketServer({ server, path, maxPayload, WebSocket: Socket });
}

/** Yoga's server context: the Node request over HTTP, or the socket's authentication over graphql-ws. */
export interface ServerContext {
  req?: IncomingMessage;
  /** graphql-ws: the tenant the connection authenticated as. */
  wsAuth?: AuthResult;
}

/** Serve graphql-ws on wss; the returned handle's dispose() ends its subscriptions. */
export function serveGraphqlWs(
  wss: WebSocketServer,
  yoga: YogaServerInstance<ServerContext, RequestContext>,
  keys: ApiKeys,
): ReturnType<typeof useServer> {
  const wsAuth = new WeakMap<object, AuthResult>();
  return useServer<Record<string, unknown>, { request: IncomingMessage }>(
    {
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
      onConnect: (ctx) => {
        const given =
          ctx.connectionParams?.authorization ??
          ctx.connectionParams?.Authorization ??
          ctx.extra.request.headers.authorization;
        const auth = keys.authenticate(typeof given === 'string' ? given : undefined);
        if (!auth.ok) return false; // closes with 4403 Forbidden
        wsAuth.set(ctx, auth);
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          req: ctx.extra.request,
          wsAuth: wsAuth.get(ctx),
          params: payload,
        });
        let document;
        try {
          document = parse(payload.query);
        } catch (e) {
          return [clientError(e instanceof GraphQLError ? e : new GraphQLError(String(e)))];
        }
        const errors = validate(schema, document);
        if (errors.length) return errors;
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
      },
    },
    wss,
  );
}

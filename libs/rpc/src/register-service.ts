import type { DescMethod, DescService } from '@bufbuild/protobuf';
import type { Server, UntypedServiceImplementation } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import type { CallContext, ServiceImpl } from './method-types.js';
import { handlerFor, type HandlerHooks } from './server-handlers.js';
import { createServiceDefinition } from './service-definition.js';
import { RpcReason } from './errors.js';

export type RegisterServiceOptions = HandlerHooks;

/**
 * Adds a protobuf-es service to a grpc-js server. `impl` has one async
 * function per method, keyed by the method's localName; whatever a handler
 * throws reaches the client as a LedgerlineError with the same code, reason
 * and details. Methods are bound to `impl`, so a class instance works as is.
 */
export function registerService<S extends DescService>(
  server: Server,
  service: S,
  impl: ServiceImpl<S>,
  options: RegisterServiceOptions = {},
): void {
  const handlers: UntypedServiceImplementation = {};
  for (const method of service.methods) {
    handlers[method.localName] = handlerFor(method, boundHandler(service, impl, method), options);
  }
  server.addService(createServiceDefinition(service), handlers);
}

/** `impl`'s handler of `method`, bound to `impl`; a missing one is refused (INTERNAL / HANDLER_MISSING). */
export function boundHandler<S extends DescService>(
  service: S,
  impl: ServiceImpl<S>,
  method: DescMethod,
): (input: unknown, context: CallContext) => unknown {
  const handler = (impl as Record<string, unknown>)[method.localName];
  if (typeof handler !== 'function') {
    // A missing handler is a wiring bug: refuse to start rather than answer UNIMPLEMENTED later.
    throw new LedgerlineError(
      'INTERNAL',
      RpcReason.HANDLER_MISSING,
      `${service.typeName} has no handler for ${method.name} (expected a function named ${method.localName})`,
    );
  }
  return (handler as (input: unknown, context: CallContext) => unknown).bind(impl);
}

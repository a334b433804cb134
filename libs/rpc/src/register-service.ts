import type { DescService } from '@bufbuild/protobuf';
import type { Server, UntypedServiceImplementation } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import type { ServiceImpl } from './method-types.js';
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
    const handler = (impl as Record<string, unknown>)[method.localName];
    if (typeof handler !== 'function') {
      // A missing handler is a wiring bug: refuse to start rather than answer UNIMPLEMENTED later.
      throw new LedgerlineError(
        'INTERNAL',
        RpcReason.HANDLER_MISSING,
        `${service.typeName} has no handler for ${method.name} (expected a function named ${method.localName})`,
      );
    }
    handlers[method.localName] = handlerFor(method, handler.bind(impl), options);
  }
  server.addService(createServiceDefinition(service), handlers);
}

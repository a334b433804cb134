// A metadata-store service whose Get waits before answering, to hold calls
// in flight while a test shuts the server down.
import { ChangeKind, MetadataStoreService } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { grpcService } from '../grpc-server.js';

export interface WaitingService {
  registration: ReturnType<typeof grpcService>;
  /** Calls whose handler has started. */
  started: CallContext[];
  /** Calls whose handler saw its signal abort. */
  aborted: CallContext[];
}

function wait(ms: number, context: CallContext, aborted: CallContext[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    context.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        aborted.push(context);
        reject(context.signal.reason);
      },
      { once: true },
    );
  });
}

/** Get('/wait/<ms>') answers after <ms> milliseconds, or fails when cancelled. */
export function waitingService(): WaitingService {
  const started: CallContext[] = [];
  const aborted: CallContext[] = [];
  const registration = grpcService(MetadataStoreService, {
    async get(request, context) {
      started.push(context);
      const ms = Number(request.path.split('/')[2] ?? '0');
      await wait(ms, context, aborted);
      return { node: { value: new TextEncoder().encode(request.path), version: 1n } };
    },
    async exists() {
      return { exists: false };
    },
    async put() {
      return { version: 0n };
    },
    async delete() {
      return {};
    },
    async children() {
      return { names: [] };
    },
    async *watch(request, context) {
      yield { path: request.pathPrefix, kind: ChangeKind.CREATED, version: 0n };
      // '/until-drain' holds the stream open as a watch does, until the server drains.
      if (request.pathPrefix === '/until-drain' && context.draining !== undefined) {
        const draining = context.draining;
        await new Promise<void>((resolve) =>
          draining.aborted ? resolve() : draining.addEventListener('abort', () => resolve(), { once: true }),
        );
      }
    },
  });
  return { registration, started, aborted };
}

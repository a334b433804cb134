import { Metadata } from '@grpc/grpc-js';
import type { CallOptions } from '@ledgerline/rpc';

/**
 * Who a console request comes from: its bearer token, forwarded unchanged to
 * every service call so that the services' own checks decide (the console has
 * no token of its own to widen what a caller may see).
 */
export class Caller {
  constructor(
    /** The token of `Authorization: Bearer <token>`; undefined when the request had none. */
    readonly token: string | undefined,
    private readonly deadlineMs: number,
  ) {}

  /** The Authorization header of a Connect request, read as the gRPC services read theirs. */
  static fromHeaders(headers: Headers, deadlineMs: number): Caller {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get('authorization') ?? '');
    return new Caller(match?.[1], deadlineMs);
  }

  callOptions(): CallOptions {
    const metadata = new Metadata();
    if (this.token !== undefined) metadata.set('authorization', `Bearer ${this.token}`);
    return { deadlineMs: this.deadlineMs, metadata };
  }
}

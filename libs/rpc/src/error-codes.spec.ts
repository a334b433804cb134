import { status } from '@grpc/grpc-js';
import { Code } from '@ledgerline/errors';

describe('Code', () => {
  it('spells every gRPC status code with the number grpc-js puts on the wire', () => {
    const grpcCodes = Object.entries(status).filter(([name, value]) => typeof value === 'number' && name !== 'OK');
    expect(Object.fromEntries(grpcCodes)).toEqual(Code);
  });
});

import { create, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorInfoSchema } from '@gen/common_pb';
import { toCallError } from './call-error';

describe('toCallError', () => {
  it('reads the stable reason from the ErrorInfo detail as a browser receives it', () => {
    // On the wire a detail is its type name and its bytes, which is what the page gets.
    const info = create(ErrorInfoSchema, { reason: 'SUPER_USER_REQUIRED', details: { role: 'feeder' } });
    const error = new ConnectError('role feeder is not a super-user', Code.PermissionDenied);
    error.details.push({ type: ErrorInfoSchema.typeName, value: toBinary(ErrorInfoSchema, info) });
    expect(toCallError(error)).toEqual({
      code: 'PermissionDenied',
      reason: 'SUPER_USER_REQUIRED',
      message: 'role feeder is not a super-user',
      unauthenticated: false,
    });
  });

  it('has no reason for a failure without the detail, and tells a missing token apart', () => {
    const error = new ConnectError('no token', Code.Unauthenticated);
    expect(toCallError(error)).toEqual({
      code: 'Unauthenticated',
      reason: '',
      message: 'no token',
      unauthenticated: true,
    });
  });
});

import { AckMemory, MAX_REMEMBERED_ACKS, messageKey, type Position } from './ack-memory.js';

const at = (entryId: number): Position => ({ ledgerId: 1n, entryId: BigInt(entryId) });

/** Acks entry `entryId` (whole entry) and has the owner confirm it. */
function ackAndConfirm(memory: AckMemory, entryId: number): void {
  const key = messageKey(at(entryId), -1);
  memory.remember(key);
  memory.confirm([key]);
}

describe('AckMemory', () => {
  it('keeps an unconfirmed ack until every command carrying it is confirmed', () => {
    const memory = new AckMemory();
    const key = messageKey(at(0), -1);
    memory.remember(key);
    memory.remember(key);
    memory.confirm([key]);
    expect(memory.unconfirmedCount).toBe(1);
    memory.confirm([key]);
    expect(memory.unconfirmedCount).toBe(0);
    expect(memory.isAcked(at(0), -1)).toBe(true);
  });

  it('remembers the newest MAX_REMEMBERED_ACKS confirmed acks and forgets the oldest first', () => {
    const memory = new AckMemory();
    const total = MAX_REMEMBERED_ACKS + 5_000;
    for (let id = 0; id < total; id++) ackAndConfirm(memory, id);
    expect(memory.isAcked(at(0), -1)).toBe(false);
    expect(memory.isAcked(at(4_999), -1)).toBe(false);
    expect(memory.isAcked(at(5_000), -1)).toBe(true);
    expect(memory.isAcked(at(total - 1), -1)).toBe(true);
  });

  it('counts an ack confirmed again as new, so it is forgotten after the ones confirmed before it', () => {
    const memory = new AckMemory();
    for (let id = 0; id < MAX_REMEMBERED_ACKS; id++) ackAndConfirm(memory, id);
    ackAndConfirm(memory, 0);
    ackAndConfirm(memory, MAX_REMEMBERED_ACKS);
    expect(memory.isAcked(at(0), -1)).toBe(true);
    expect(memory.isAcked(at(1), -1)).toBe(false);
  });

  it('never forgets an unconfirmed ack, however many are confirmed after it', () => {
    const memory = new AckMemory();
    memory.remember(messageKey(at(999_999), -1));
    for (let id = 0; id < MAX_REMEMBERED_ACKS + 10; id++) ackAndConfirm(memory, id);
    expect(memory.isAcked(at(999_999), -1)).toBe(true);
  });

  it('forgets everything after a seek', () => {
    const memory = new AckMemory();
    ackAndConfirm(memory, 0);
    memory.remember(messageKey(at(1), -1));
    memory.forget();
    expect(memory.isAcked(at(0), -1)).toBe(false);
    expect(memory.isAcked(at(1), -1)).toBe(false);
    expect(memory.unconfirmedCount).toBe(0);
  });
});

import {
  ALL_MANAGED_LEDGERS_PATTERN,
  decodeLedgersDeletable,
  decodeManagedLedgerNotification,
  InProcessBus,
  LEDGERS_DELETABLE_SUBJECT,
} from '@ledgerline/bus';
import { ManagedLedgerFactory } from './managed-ledger-factory.js';
import { payloadOf, testBackends } from './testing/fixtures.js';

describe('ManagedLedgerFactory', () => {
  it('holds one managed ledger per topic, bucketed paths included, and closes them all', async () => {
    const factory = new ManagedLedgerFactory(testBackends().deps(), { maintenanceIntervalMs: 0 });
    const [a, b] = await Promise.all([factory.open('acme/f/one'), factory.open('persistent://acme/f/one')]);
    expect(a).toBe(b);
    const bucketed = await factory.open('acme/f/two', {}, { numberOfTopicBuckets: 4 });
    expect(bucketed.path).toMatch(/^\/managed-ledgers\/acme\/f\/persistent\/\$\d\/two$/);
    expect(await factory.get('acme/f/two', { numberOfTopicBuckets: 4 })).toBe(bucketed);
    await factory.close();
    expect(a.state).toBe('closed');
    expect(bucketed.state).toBe('closed');
  });
});

describe('notifications', () => {
  it('publishes "rolled" when a ledger rolls over and the ids trimming marks deletable', async () => {
    const bus = new InProcessBus();
    const rolled = bus.subscribe(ALL_MANAGED_LEDGERS_PATTERN);
    const deletable = bus.subscribe(LEDGERS_DELETABLE_SUBJECT);
    const factory = new ManagedLedgerFactory(
      { ...testBackends().deps(), bus },
      { maintenanceIntervalMs: 0, minLedgerAgeMs: 0 },
    );
    const ml = await factory.open('acme/n/topic', { maxEntriesPerLedger: 2 });
    const first = await ml.append(payloadOf('n0'));
    for (let i = 1; i < 3; i++) await ml.append(payloadOf(`n${i}`));
    const firstLedger = first.position.ledgerId;
    const rolledMessage = await rolled[Symbol.asyncIterator]().next();
    const notification = decodeManagedLedgerNotification(rolledMessage.value!.data);
    expect(notification).toMatchObject({ name: 'acme/n/persistent/topic', kind: 'rolled' });
    // No cursor and no retention: the closed ledger is trimmed (after the rollover) and announced.
    await ml.trim();
    expect(ml.ledgers().map((l) => l.ledgerId)).not.toContain(firstLedger);
    const deletableMessage = await deletable[Symbol.asyncIterator]().next();
    expect(decodeLedgersDeletable(deletableMessage.value!.data)).toMatchObject({
      name: 'acme/n/persistent/topic',
      ledgerIds: [firstLedger],
    });
    rolled.unsubscribe();
    deletable.unsubscribe();
    await factory.close();
    await bus.close();
  });
});

import { create } from '@bufbuild/protobuf';
import { AuthAction } from '@gen/admin_pb';
import { NamespaceSummarySchema } from '@gen/console_pb';
import { permissionLine, policyLine } from './policies';

describe("a namespace's policies and permissions in one line", () => {
  it('names the policies that are set and leaves out the rest', () => {
    const namespace = create(NamespaceSummarySchema, {
      name: 'acme/orders',
      policies: { numberOfTopicBuckets: 8, retentionTimeMinutes: 1440n, allowAutoTopicCreation: true, maxTopics: 0 },
    });
    expect(policyLine(namespace)).toBe('8 buckets · retention 1440 min · auto-creates topics');
    expect(policyLine(create(NamespaceSummarySchema, { name: 'a/b' }))).toBe('');
  });

  it('lists grants per role, and says when the caller may not see them', () => {
    const visible = create(NamespaceSummarySchema, {
      permissionsVisible: true,
      permissions: {
        feeder: { actions: [AuthAction.PRODUCE] },
        app: { actions: [AuthAction.PRODUCE, AuthAction.CONSUME] },
      },
    });
    expect(permissionLine(visible)).toBe('feeder: produce, app: produce+consume');
    expect(permissionLine(create(NamespaceSummarySchema, { permissionsVisible: true }))).toBe('none');
    expect(permissionLine(create(NamespaceSummarySchema, { permissionsVisible: false }))).toBe('hidden');
  });
});

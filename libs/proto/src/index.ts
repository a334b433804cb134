// Generated messages and service descriptors for every Ledgerline contract.
// The files under gen/ come from `npm run proto:generate` and are never edited by hand.
export * from './gen/ledgerline/v1/common_pb.js';
export * from './gen/ledgerline/v1/managed_ledger_pb.js';
export * from './gen/ledgerline/v1/pulsar_api_pb.js';
export * from './gen/ledgerline/v1/metadata_pb.js';
export * from './gen/ledgerline/v1/admin_pb.js';
export * from './gen/ledgerline/v1/lookup_pb.js';
export * from './gen/ledgerline/v1/topics_pb.js';
export * from './gen/ledgerline/v1/cursors_pb.js';
export * from './gen/ledgerline/v1/garbage_collector_pb.js';
export * from './gen/ledgerline/v1/owner_control_pb.js';
export * from './gen/ledgerline/v1/console_pb.js';

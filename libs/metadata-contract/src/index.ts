// What callers of the metadata service share with it beyond the protobuf
// contract: the reasons it answers with, and how it places topics on owners.
// Importing it loads none of the service (nor the metadata store it runs on).
export { MetadataServiceReason } from './metadata-service-reason.js';
export { rendezvousPick } from './rendezvous.js';
export { MAX_LEASES_PER_CONFIRM } from './limits.js';

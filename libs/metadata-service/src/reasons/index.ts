// The reason constants alone, for packages that branch on the metadata
// service's answers over gRPC: importing them loads none of the service (nor
// the metadata store it runs on).
export { MetadataServiceReason } from '../errors.js';
